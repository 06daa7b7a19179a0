import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, startCli } from './run-cli.js';

// What a mistyped command line gets back, and Ctrl-C at any moment of `ask`.
// None of these reach a service, so none is started.

vi.setConfig({ testTimeout: 60_000 });

const env = { PAUSEPOINT_API_KEY: `svc_test_${'0'.repeat(48)}`, PAUSEPOINT_BASE_URL: 'http://127.0.0.1:9' };

describe('a mistyped flag', () => {
  it('gets one plain line naming it, then the command’s usage', async () => {
    const [askLong, askShort, pauses, listen, webhooks] = await Promise.all([
      runCli(['ask', 'Q?', '--frobnicate'], env),
      runCli(['ask', '-z', 'Q?'], env),
      runCli(['pauses', 'list', '--stauts', 'pending'], env),
      runCli(['listen', '--forward-to', 'http://127.0.0.1:8000', '--foo=bar'], env),
      runCli(['webhooks', 'list', '--x'], env),
    ]);
    expect(askLong.code).toBe(3);
    expect(askLong.stderr).toMatch(/^pausepoint: unknown option --frobnicate\n\nUsage: pausepoint ask QUESTION/);
    expect(askShort.stderr).toMatch(/^pausepoint: unknown option -z\n\nUsage: pausepoint ask/);
    expect(pauses.code).toBe(2);
    expect(pauses.stderr).toMatch(/^pausepoint: unknown option --stauts\n\nUsage:\n {2}pausepoint pauses list/);
    expect(listen.code).toBe(2);
    expect(listen.stderr).toMatch(/^pausepoint: unknown option --foo\n\nUsage: pausepoint listen/);
    expect(webhooks.code).toBe(2);
    expect(webhooks.stderr).toMatch(/^pausepoint: unknown option --x\n\nUsage:\n {2}pausepoint webhooks list/);
    for (const result of [askLong, askShort, pauses, listen, webhooks]) expect(result.stdout).toBe('');
  });

  it('says so when a value is missing, not wanted, or looks like a flag', async () => {
    const [missing, unwanted, dashed, dashedShort, noKey, prototypeKey] = await Promise.all([
      runCli(['listen', '--forward-to'], env),
      runCli(['ask', 'Q?', '--quiet=yes'], env),
      runCli(['ask', 'Q?', '--timeout', '-5m'], env),
      runCli(['ask', 'Q?', '-o', '-x'], env),
      runCli(['ask', 'Q?', '--metadata', '=x'], env),
      runCli(['ask', 'Q?', '--metadata', '__proto__=x'], env),
    ]);
    const firstLine = (stderr: string) => stderr.split('\n')[0];
    expect(firstLine(missing.stderr)).toBe('pausepoint: --forward-to needs a value');
    expect(firstLine(unwanted.stderr)).toBe('pausepoint: --quiet takes no value');
    expect(firstLine(dashed.stderr)).toBe(
      'pausepoint: --timeout needs a value; to give one that starts with "-", write --timeout=-5m',
    );
    expect(firstLine(dashedShort.stderr)).toBe(
      'pausepoint: -o needs a value; to give one that starts with "-", write --option=-x',
    );
    expect(firstLine(noKey.stderr)).toBe('pausepoint: --metadata takes KEY=VALUE, got "=x"');
    expect(firstLine(prototypeKey.stderr)).toBe('pausepoint: --metadata: __proto__ is not a key the API accepts');
    for (const result of [noKey, prototypeKey]) expect(result.code).toBe(3);
  });

  it('says what is wrong with the reviewer flags, before asking the service', async () => {
    const r = ['--reviewer', 'ana@example.com'];
    const results = await Promise.all([
      runCli(['ask', 'Q?', '--quorum', '2'], env),
      runCli(['ask', 'Q?', '--reviewer', 'ana at example.com'], env),
      runCli(['ask', 'Q?', '-r', 'Ana <ana@example.com'], env),
      runCli(['ask', 'Q?', ...r, '--veto', 'maybe'], env),
      runCli(['ask', 'Q?', ...r, '--quorum', 'two'], env),
      runCli(['ask', 'Q?', ...r, '--remind-every', 'often'], env),
      runCli(['ask', 'Q?', ...r, '--remind-max', '2'], env),
      runCli(['ask', 'Q?', ...r, '--escalate-to', 'cto@example.com'], env),
      runCli(['ask', 'Q?', ...r, '--escalate-after', '1h'], env),
      runCli(['ask', 'Q?', ...r, '--notify-slack', 'https://hooks.slack.com/services/x'], env),
    ]);
    expect(results.map((result) => result.stderr.split('\n')[0])).toEqual([
      'pausepoint: --quorum goes with --reviewer',
      'pausepoint: --reviewer: not an email address: "ana at example.com" (try ana@example.com or "Ana Lima <ana@example.com>")',
      'pausepoint: --reviewer: not an email address: "Ana <ana@example.com" (try ana@example.com or "Ana Lima <ana@example.com>")',
      'pausepoint: --veto must be one of the options (approve, reject), got "maybe"',
      'pausepoint: --quorum must be a whole number of at least 1',
      'pausepoint: --remind-every: not a duration: "often" (try 90s, 30m, 2h, 1d or 1h30m)',
      'pausepoint: --remind-max goes with --remind-every',
      'pausepoint: --escalate-to goes with --escalate-after',
      'pausepoint: --escalate-after needs --escalate-to',
      'pausepoint: --notify and --notify-slack do not go with --reviewer: each reviewer is emailed their own link',
    ]);
    for (const result of results) {
      expect(result.code).toBe(3);
      expect(result.stdout).toBe('');
    }
  });

  it('is a usage error in --json too', async () => {
    const result = await runCli(['ask', 'Q?', '--frobnicate', '--json'], env);
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toEqual({ error: { code: 'usage', message: 'unknown option --frobnicate' } });
    expect(result.stderr).toBe('');
  });
});

describe('Ctrl-C in ask', () => {
  // A server that takes the connection and never answers: ask is still creating.
  let silent: ReturnType<typeof createServer>;
  let silentUrl: string;
  const sockets: Socket[] = [];
  const connected: Array<() => void> = [];
  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.push(socket);
      for (const notify of connected.splice(0)) notify();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('exits 130 even before the service has answered the create', async () => {
    const reached = new Promise<void>((resolve) => connected.push(resolve));
    const cli = startCli(['ask', 'Interrupted early?'], { ...env, PAUSEPOINT_BASE_URL: silentUrl });
    await reached;
    cli.child.kill('SIGINT');
    const result = await cli.exited;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/^Interrupted before the service answered/);
  });

  it('is in ask --help, with the other exit codes', async () => {
    const help = await runCli(['ask', '--help']);
    expect(help.stdout).toMatch(/130 interrupted \(Ctrl-C\): the pause is cancelled/);
  });
});
