import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanEnv, ROOT, type RunningCli, startProcess } from '../cli/run-cli.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The agent-framework examples, run as their headers say (npx tsx …) against a
// real service, each with its framework's scripted model, and a person who
// answers through the response endpoint.
vi.setConfig({ testTimeout: 60_000 });

const TSX = import.meta.resolve('tsx');

let service: TestService;
let dev: Account;
let env: Record<string, string>;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  env = cleanEnv({ PAUSEPOINT_API_KEY: dev.test, PAUSEPOINT_BASE_URL: service.url });
});
afterAll(() => service?.destroy());

function example(file: string, extra: Record<string, string> = {}): RunningCli {
  return startProcess(process.execPath, ['--import', TSX, join(ROOT, 'examples', file)], {
    env: { ...env, ...extra },
    cwd: ROOT,
  });
}

/** Answers the pause whose response link the example printed on stderr, with `values` for its form; returns the pause. */
async function answerFrom(
  running: RunningCli,
  pattern: RegExp,
  choice: string,
  text?: string,
  values?: Record<string, unknown>,
) {
  const [, url] = await running.waitFor(pattern, 'stderr');
  const token = new URL(url!).pathname.replace(/^\/r\//, '');
  const reply = await call(service.url, 'POST', `/v1/respond/${token}`, {
    body: { choice, ...(text === undefined ? {} : { text }), ...(values === undefined ? {} : { values }) },
  });
  expect(reply.status, reply.text).toBe(200);
  const pauseId = token.split('.')[0]!;
  return (await call(service.url, 'GET', `/v1/pause/${pauseId}`, { token: dev.test })).body;
}

describe('examples/ai-sdk-guarded-tool.ts', () => {
  it('refunds once a person approves the call they were shown', async () => {
    const running = example('ai-sdk-guarded-tool.ts');
    const pause = await answerFrom(running, /Approve or reject refund_order at: (\S+)/, 'approve');
    expect(pause).toMatchObject({ title: 'Allow the agent to run refund_order?', status: 'responded' });
    expect(pause.body).toContain('{\n  "order_id": 1042,\n  "amount": 129.5,\n  "reason": "never arrived"\n}');
    expect(pause.form).toMatchObject({
      schema: { properties: { order_id: { type: 'number' }, amount: { type: 'number' }, reason: { type: 'string' } } },
      values: { order_id: 1042, amount: 129.5, reason: 'never arrived' },
      on: ['approve'],
    });
    expect(pause.response).toMatchObject({ edited: false });
    const result = await running.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'lookup_order -> {"order_id":1042,"customer":"ada@example.com","total":129.5,"refunded":false}\n' +
        'refund_order -> {"refunded":129.5,"order_id":1042,"to":"ada@example.com"}\n' +
        'Agent: Order 1042 is refunded: 129.5 back to ada@example.com.\n' +
        'Order 1042 refunded: true\n',
    );
  });

  it('refunds the amount a person changed it to, once, and the model reads what they changed', async () => {
    const running = example('ai-sdk-guarded-tool.ts');
    const pause = await answerFrom(running, /Approve or reject refund_order at: (\S+)/, 'approve', undefined, {
      order_id: 1042,
      amount: 100,
      reason: 'never arrived; shipping kept',
    });
    expect(pause.response).toMatchObject({ edited: true, values: { amount: 100 } });
    const result = await running.exited;
    expect(result.code, result.stderr).toBe(0);
    const message =
      'A person changed the arguments before approving refund_order: amount from 129.5 to 100; reason from ' +
      '"never arrived" to "never arrived; shipping kept". It ran once, with their values; its result is in `result`. ' +
      'Use their values from now on.';
    expect(result.stdout).toBe(
      'lookup_order -> {"order_id":1042,"customer":"ada@example.com","total":129.5,"refunded":false}\n' +
        `refund_order -> {"edited_by_human":true,"message":"${message.replaceAll('"', '\\"')}",` +
        '"changes":[{"argument":"amount","proposed":129.5,"approved":100},' +
        '{"argument":"reason","proposed":"never arrived","approved":"never arrived; shipping kept"}],' +
        '"input":{"order_id":1042,"amount":100,"reason":"never arrived; shipping kept"},' +
        '"result":{"refunded":100,"order_id":1042,"to":"ada@example.com"}}\n' +
        `Agent: Order 1042 is refunded: 100 back to ada@example.com. (${message.replaceAll('\\"', '"')})\n` +
        'Order 1042 refunded: true\n',
    );
  });

  it('does not refund when rejected; the model reads the reason and says so', async () => {
    const running = example('ai-sdk-guarded-tool.ts');
    await answerFrom(running, /Approve or reject refund_order at: (\S+)/, 'reject', 'it was delivered, see the photo');
    const result = await running.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('refund_order -> {"not_run":true,"reason":"rejected"');
    expect(result.stdout).toContain(
      'Agent: I could not refund order 1042. A person did not approve refund_order (they chose "reject") and wrote: it was delivered, see the photo.',
    );
    expect(result.stdout).toContain('Order 1042 refunded: false\n');
  });

  it('does not refund when nobody answers in time', async () => {
    const result = await example('ai-sdk-guarded-tool.ts', { APPROVAL_TIMEOUT_SECONDS: '1' }).exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Agent: I could not refund order 1042. Nobody approved refund_order in time');
    expect(result.stdout).toContain('Order 1042 refunded: false\n');
  });
});

describe('examples/openai-agents-approvals.ts', () => {
  it('runs the approved call, refuses the rejected one, and the model reports both', async () => {
    const running = example('openai-agents-approvals.ts');
    // Both calls are asked at once: each link is printed before either is answered.
    const [, dropUrl] = await running.waitFor(/Approve or reject drop_database at: (\S+)/, 'stderr');
    const restart = await answerFrom(running, /Approve or reject restart_service at: (\S+)/, 'approve');
    expect(restart.body).toContain('{\n  "service": "api"\n}');
    const dropToken = new URL(dropUrl!).pathname.replace(/^\/r\//, '');
    const reply = await call(service.url, 'POST', `/v1/respond/${dropToken}`, {
      body: { choice: 'reject', text: 'staging holds the release candidate' },
    });
    expect(reply.status).toBe(200);
    const result = await running.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'restart_service({"service":"api"}): approved\n' +
        'drop_database({"name":"staging"}): not run (rejected)\n' +
        'Agent: Restarted api. A person did not approve drop_database (they chose "reject") and wrote: ' +
        'staging holds the release candidate. It was not run. Do not call it again with the same arguments; ' +
        'tell the user, or ask them what to do instead.\n',
    );
  });

  it('runs the call with the values a person approved: the model calls again with them, and it runs once', async () => {
    const running = example('openai-agents-approvals.ts');
    const [, dropUrl] = await running.waitFor(/Approve or reject drop_database at: (\S+)/, 'stderr');
    const restart = await answerFrom(running, /Approve or reject restart_service at: (\S+)/, 'approve', undefined, {
      service: 'api-canary',
    });
    expect(restart.form).toMatchObject({ values: { service: 'api' }, on: ['approve'] });
    const dropToken = new URL(dropUrl!).pathname.replace(/^\/r\//, '');
    const reply = await call(service.url, 'POST', `/v1/respond/${dropToken}`, { body: { choice: 'reject' } });
    expect(reply.status).toBe(200);
    const result = await running.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'restart_service({"service":"api"}): approved as {"service":"api-canary"}: the model is asked to call again with that\n' +
        'drop_database({"name":"staging"}): not run (rejected)\n' +
        'restart_service({"service":"api-canary"}): approved\n' +
        'Agent: A person approved restart_service with changed arguments: service from "api" to "api-canary". ' +
        'It was not run with yours. To run it, call restart_service again with exactly these arguments: ' +
        '{"service":"api-canary"}; that call runs without asking again. Other arguments need a new approval. ' +
        'A person did not approve drop_database (they chose "reject"). It was not run. Do not call it again with ' +
        'the same arguments; tell the user, or ask them what to do instead. Restarted api-canary.\n',
    );
    // The call again with the person's values ran without a pause of its own.
    const pauses = (await call(service.url, 'GET', '/v1/pause?limit=100', { token: dev.test })).body.data;
    const callIds = pauses.map((pause: { metadata: { tool_call_id?: string } }) => pause.metadata.tool_call_id);
    expect(callIds).toContain('call_restart');
    expect(callIds).not.toContain('call_restart_again');
  });

  it('runs neither when nobody answers in time', async () => {
    const result = await example('openai-agents-approvals.ts', { APPROVAL_TIMEOUT_SECONDS: '1' }).exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('restart_service({"service":"api"}): not run (timed_out)\n');
    expect(result.stdout).toContain('drop_database({"name":"staging"}): not run (timed_out)\n');
    expect(result.stdout).not.toContain('Restarted');
  });
});
