import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanEnv, pausepointOnPath, ROOT, type RunningCli, startCli, startProcess } from '../cli/run-cli.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// Each example in examples/ run as its README says, against a real service,
// with a person answering through the response endpoint.
vi.setConfig({ testTimeout: 60_000 });

const TSX = import.meta.resolve('tsx');

let service: TestService;
let dev: Account;
let bin: ReturnType<typeof pausepointOnPath>;
let env: Record<string, string>;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  bin = pausepointOnPath();
  env = cleanEnv({
    PAUSEPOINT_API_KEY: dev.test,
    PAUSEPOINT_BASE_URL: service.url,
    PATH: `${bin.dir}:${process.env.PATH}`,
  });
});
afterAll(async () => {
  bin?.remove();
  await service?.destroy();
});

/** Answers the pause whose response link the process printed on stderr. */
async function answerFrom(running: RunningCli, pattern: RegExp, choice: string, text?: string) {
  const [, url] = await running.waitFor(pattern, 'stderr');
  const token = new URL(url!).pathname.replace(/^\/r\//, '');
  const reply = await call(service.url, 'POST', `/v1/respond/${token}`, {
    body: text === undefined ? { choice } : { choice, text },
  });
  expect(reply.status, reply.text).toBe(200);
}

describe('examples/deploy-gate.sh', () => {
  const gate = (extra: Record<string, string> = {}) =>
    startProcess('bash', [join(ROOT, 'examples/deploy-gate.sh'), 'v2.4.1'], { env: { ...env, ...extra }, cwd: ROOT });

  it('deploys when approved', async () => {
    const running = gate();
    await answerFrom(running, /Answer at: (\S+)/, 'approve');
    const result = await running.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Answered: approve\nDeploying v2.4.1 to production...\n');
    const [pause] = (await call(service.url, 'GET', '/v1/pause?limit=1', { token: dev.test })).body.data;
    expect(pause).toMatchObject({ title: 'Deploy v2.4.1 to production?', metadata: { version: 'v2.4.1' } });
  });

  it('does not deploy when rejected', async () => {
    const running = gate();
    await answerFrom(running, /Answer at: (\S+)/, 'reject');
    const result = await running.exited;
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain('Deploying');
    expect(result.stderr).toContain('Not deploying v2.4.1: it was rejected');
  });

  it('does not deploy when nobody answers in time (the default is reject)', async () => {
    const result = await gate({ DEPLOY_GATE_TIMEOUT: '1s' }).exited;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Timed out: reject (the default)\n');
  });

  it('does not deploy when it cannot ask', async () => {
    const result = await gate({ PAUSEPOINT_API_KEY: `svc_test_${'0'.repeat(48)}` }).exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('could not ask (pausepoint exited 3)');
  });
});

describe('examples/agent-tool.ts', () => {
  const agent = (extra: Record<string, string> = {}) =>
    startProcess(process.execPath, ['--import', TSX, join(ROOT, 'examples/agent-tool.ts')], {
      env: { ...env, ...extra },
      cwd: ROOT,
    });

  it('runs the risky tool once a person allows it', async () => {
    const running = agent();
    await answerFrom(running, /Allow or deny delete_user at: (\S+)/, 'allow');
    const result = await running.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'list_users -> {"41":"ada@example.com","42":"grace@example.com"}\n' +
        'delete_user -> Deleted user 42 and their data.\n',
    );
    const [pause] = (await call(service.url, 'GET', '/v1/pause?limit=1', { token: dev.test })).body.data;
    expect(pause).toMatchObject({
      title: 'The agent wants to delete a user and all their data',
      body: 'delete_user({"user_id":42,"reason":"asked to close her account"})',
      options: ['allow', 'deny'],
      metadata: { tool: 'delete_user' },
    });
  });

  it('hands the model a refusal when the person denies it, with their reason', async () => {
    const running = agent();
    await answerFrom(running, /Allow or deny delete_user at: (\S+)/, 'deny', 'archive her instead');
    const result = await running.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'delete_user -> A person did not allow delete_user (deny): archive her instead. Do not try it again',
    );
  });

  it('refuses when nobody answers in time', async () => {
    const result = await agent({ APPROVAL_TIMEOUT_SECONDS: '1' }).exited;
    expect(result.stdout).toContain('A person did not allow delete_user (nobody answered in time)');
  });
});

describe('examples/webhook-receiver.ts', () => {
  const SECRET = 'whsec_example_receiver_0123456789';
  let receiver: RunningCli;
  let hook: string;
  let listener: RunningCli;

  beforeAll(async () => {
    receiver = startProcess(process.execPath, ['--import', TSX, join(ROOT, 'examples/webhook-receiver.ts')], {
      env: { ...env, PORT: '0', PAUSEPOINT_WEBHOOK_SECRET: SECRET },
      cwd: ROOT,
    });
    [, hook] = (await receiver.waitFor(/Receiving pausepoint webhooks at (\S+)/, 'stdout')) as [string, string];
    // Real events reach it through `pausepoint listen`, signed with the same secret.
    listener = startCli(['listen', '--forward-to', hook, '--secret', SECRET], {
      PAUSEPOINT_API_KEY: dev.test,
      PAUSEPOINT_BASE_URL: service.url,
    });
    await listener.waitFor(/Ctrl-C stops/, 'stdout');
  });
  afterAll(async () => {
    listener?.child.kill('SIGINT');
    receiver?.child.kill('SIGTERM');
    await Promise.all([listener?.exited, receiver?.exited]);
  });

  it('accepts and handles genuine events of each type', async () => {
    const answered = await createPause(service.url, dev.test, { allow_text: true });
    await call(service.url, 'POST', `/v1/respond/${tokenOf(answered)}`, { body: { choice: 'approve', text: 'ok' } });
    await receiver.waitFor(new RegExp(`${answered.id} answered: approve \\(ok\\)`), 'stdout');

    const cancelled = await createPause(service.url, dev.test);
    await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.test });
    await receiver.waitFor(new RegExp(`${cancelled.id} cancelled`), 'stdout');

    const expired = await createPause(service.url, dev.test, { expires_in: 1, timeout_default: 'reject' });
    await receiver.waitFor(new RegExp(`${expired.id} timed out: reject`), 'stdout');
    await listener.waitFor(new RegExp(`${expired.id}\\s+-> 204`), 'stdout');
  });

  it('answers 401 to a forged or tampered delivery, 400 to a signed non-event, and 200 to a repeat', async () => {
    const body = JSON.stringify({
      event: 'pause.cancelled',
      pause_id: 'pause_forged',
      developer_id: dev.id,
      timestamp: new Date().toISOString(),
      data: { metadata: {} },
    });
    const sign = (text: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;
    const post = (text: string, headers: Record<string, string>) =>
      fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });

    expect((await post(body, {})).status).toBe(401);
    expect((await post(body, { 'x-service-signature': sign(body, 'whsec_someone_else_entirely') })).status).toBe(401);
    expect((await post(body.replace('forged', 'tampered'), { 'x-service-signature': sign(body) })).status).toBe(401);
    expect((await post('{"hello":"world"}', { 'x-service-signature': sign('{"hello":"world"}') })).status).toBe(400);

    const genuine = { 'x-service-signature': sign(body), 'x-service-delivery': 'evt_repeat' };
    expect((await post(body, genuine)).status).toBe(204);
    expect((await post(body, genuine)).status).toBe(200);
    expect(receiver.stdout.match(/pause_forged cancelled/g)).toHaveLength(1);
  });
});
