import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { ROOT, type RunningCli, runCli, startCli } from './run-cli.js';

// `pausepoint ask` as a script runs it: a real process against a real
// service; a person answers through the response endpoint meanwhile. Each
// outcome has its exit code: 0 first option, 1 other option or cancel,
// 2 timeout without default, 3 error.

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let dev: Account;
let env: Record<string, string>;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  env = { PAUSEPOINT_API_KEY: dev.test, PAUSEPOINT_BASE_URL: service.url };
});
afterAll(() => service?.destroy());

/** The response link `ask` prints on stderr, once it has. */
async function linkOf(cli: RunningCli): Promise<{ token: string; id: string }> {
  const [, url] = await cli.waitFor(/Answer at: (\S+)/, 'stderr');
  const token = new URL(url!).pathname.replace(/^\/r\//, '');
  return { token, id: token.split('.')[0]! };
}

async function answer(cli: RunningCli, choice: string, text?: string) {
  const { token } = await linkOf(cli);
  const reply = await call(service.url, 'POST', `/v1/respond/${token}`, {
    body: text === undefined ? { choice } : { choice, text },
  });
  expect(reply.status, reply.text).toBe(200);
}

describe('exit codes', () => {
  it('0 when the first option is chosen', async () => {
    const asking = startCli(
      [
        'ask',
        'Deploy v2 to prod?',
        '--option',
        'approve',
        '--option',
        'reject',
        '--timeout',
        '30m',
        '--default',
        'reject',
      ],
      env,
    );
    await answer(asking, 'approve');
    const done = await asking.exited;
    expect(done.code).toBe(0);
    expect(done.stdout).toBe('Answered: approve\n');
    expect(done.stderr).toMatch(/Asked: Deploy v2 to prod\? \[approve \/ reject\]/);
    // Not a terminal: no progress line.
    expect(done.stderr).not.toMatch(/left/);
  });

  it('1 when another option is chosen, with the text in the output', async () => {
    const cli = startCli(['ask', 'Ship', 'it?', '-o', 'ship', '-o', 'wait', '-o', 'never', '--allow-text'], env);
    await answer(cli, 'never', 'not on a Friday');
    const result = await cli.exited;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Answered: never ("not on a Friday")\n');
    const pauses = await call(service.url, 'GET', '/v1/pause?limit=1', { token: dev.test });
    expect(pauses.body.data[0]).toMatchObject({
      title: 'Ship it?',
      options: ['ship', 'wait', 'never'],
      allow_text: true,
    });
  });

  it('0 or 1 on a timeout with a default, by whether the default is the first option', async () => {
    const [first, other] = await Promise.all([
      runCli(['ask', 'Anyone?', '--timeout', '1s', '--default', 'approve'], env),
      runCli(['ask', 'Anyone?', '--timeout', '1s', '--default', 'reject'], env),
    ]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('Timed out: approve (the default)\n');
    expect(other.code).toBe(1);
    expect(other.stdout).toBe('Timed out: reject (the default)\n');
  });

  it('2 on a timeout without default', async () => {
    const result = await runCli(['ask', 'Anyone at all?', '--timeout', '1s'], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('Timed out with no answer\n');
  });

  it('1 when the pause is cancelled', async () => {
    const cli = startCli(['ask', 'Cancelled?'], env);
    const { id } = await linkOf(cli);
    expect((await call(service.url, 'DELETE', `/v1/pause/${id}`, { token: dev.test })).status).toBe(200);
    const result = await cli.exited;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Cancelled\n');
  });

  it('3 on errors: a bad key, an unreachable service, a refused request, bad flags', async () => {
    const [noKey, badKey, nowhere, refused, badFlag, badDefault, badTimeout, bareTimeout, noQuestion] =
      await Promise.all([
        runCli(['ask', 'Q?'], { PAUSEPOINT_BASE_URL: service.url }),
        runCli(['ask', 'Q?'], { ...env, PAUSEPOINT_API_KEY: `svc_test_${'0'.repeat(48)}` }),
        runCli(['ask', 'Q?', '--base-url', 'http://127.0.0.1:9'], env),
        runCli(['ask', 'Q?', '--option', 'same', '--option', 'same'], env),
        runCli(['ask', 'Q?', '--frobnicate'], env),
        runCli(['ask', 'Q?', '--default', 'maybe'], env),
        runCli(['ask', 'Q?', '--timeout', 'soon'], env),
        runCli(['ask', 'Q?', '--timeout', '30'], env),
        runCli(['ask'], env),
      ]);
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toBe('pausepoint: No API key: set PAUSEPOINT_API_KEY or pass --api-key.\n');
    expect(badKey.code).toBe(3);
    expect(badKey.stderr).toMatch(/unauthorized, HTTP 401, req_/);
    expect(nowhere.code).toBe(3);
    expect(nowhere.stderr).toMatch(/Could not reach pausepoint at http:\/\/127\.0\.0\.1:9/);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/invalid_request, HTTP 400/);
    expect(badFlag.code).toBe(3);
    expect(badFlag.stderr).toMatch(/^pausepoint: unknown option --frobnicate\n\nUsage: pausepoint ask/);
    expect(badDefault.code).toBe(3);
    expect(badDefault.stderr).toMatch(/--default must be one of the options \(approve, reject\)/);
    expect(badTimeout.code).toBe(3);
    expect(badTimeout.stderr).toMatch(/--timeout: not a duration/);
    // A bare number is not taken as seconds: it needs a unit, and says so.
    expect(bareTimeout.code).toBe(3);
    expect(bareTimeout.stderr.split('\n')[0]).toBe(
      'pausepoint: --timeout: "30" has no unit: write 30s for seconds or 30m for minutes (units: s, m, h, d)',
    );
    expect(bareTimeout.stdout).toBe('');
    expect(noQuestion.code).toBe(3);
    for (const result of [badKey, nowhere, refused, badFlag]) expect(result.stdout).toBe('');
  });
});

describe('--json', () => {
  it('prints the outcome and the pause as JSON', async () => {
    const cli = startCli(['ask', 'Refund?', '--json', '--allow-text', '--metadata', 'order=123'], env);
    await answer(cli, 'approve', 'fine');
    const result = await cli.exited;
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout);
    expect(output).toMatchObject({
      status: 'responded',
      choice: 'approve',
      text: 'fine',
      response_at: expect.any(String),
      exit_code: 0,
      pause: { object: 'pause', status: 'responded', title: 'Refund?', metadata: { order: '123' } },
    });
  });

  it('prints errors as JSON on stdout, with the same exit code', async () => {
    const result = await runCli(['ask', 'Q?', '--json'], { ...env, PAUSEPOINT_API_KEY: `svc_test_${'0'.repeat(48)}` });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        code: 'unauthorized',
        message: expect.any(String),
        status: 401,
        request_id: expect.stringMatching(/^req_/),
      },
    });
    const timedOut = await runCli(['ask', 'Q?', '--json', '--timeout', '1s'], env);
    expect(timedOut.code).toBe(2);
    expect(JSON.parse(timedOut.stdout)).toMatchObject({ status: 'timed_out', choice: null, exit_code: 2 });
  });
});

describe('the rest of ask', () => {
  it('--no-wait creates the pause and prints it; --notify is recorded with a test key', async () => {
    const result = await runCli(
      ['ask', 'Later?', '--no-wait', '--json', '--notify', 'ops@example.com', '--idempotency-key', 'later-1'],
      env,
    );
    expect(result.code).toBe(0);
    const pause = JSON.parse(result.stdout);
    expect(pause).toMatchObject({
      object: 'pause',
      status: 'pending',
      title: 'Later?',
      notifications: [{ channel: 'email', to: 'ops@example.com', status: 'suppressed' }],
    });
    const again = await runCli(
      ['ask', 'Later?', '--no-wait', '--notify', 'ops@example.com', '--idempotency-key', 'later-1'],
      env,
    );
    expect(again.stdout).toBe(`${pause.id}\n${pause.response_url}\n`);
  });

  it('cancels the pause when interrupted, and exits 130', async () => {
    const cli = startCli(['ask', 'Interrupt me?'], env);
    const { id } = await linkOf(cli);
    cli.child.kill('SIGINT');
    const result = await cli.exited;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(new RegExp(`Interrupted: cancelled ${id}`));
    expect((await call(service.url, 'GET', `/v1/pause/${id}`, { token: dev.test })).body.status).toBe('cancelled');
  });

  it('shows the time left on a terminal', async () => {
    // `script` gives the command a pseudo-terminal, as an interactive shell would.
    const command = `${process.execPath} --import ${import.meta.resolve('tsx')} src/main.ts ask 'On a terminal?' --timeout 2s`;
    const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    }).catch((error: { stdout: string; code: number }) => {
      expect(error.code).toBe(2);
      return error;
    });
    expect(stdout).toMatch(/Waiting for an answer… \d s left/);
    expect(stdout).toMatch(/Timed out with no answer/);
  });

  it('prints help', async () => {
    const [general, ask] = await Promise.all([runCli(['--help']), runCli(['ask', '--help'])]);
    expect(general.code).toBe(0);
    expect(general.stdout).toMatch(/ask QUESTION[\s\S]*pauses list\|get\|cancel[\s\S]*listen --forward-to URL/);
    expect(ask.code).toBe(0);
    expect(ask.stdout).toMatch(/--timeout DURATION/);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
  });
});
