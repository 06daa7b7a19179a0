import { createHmac } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause, eventually, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { type RunningCli, startCli } from './run-cli.js';

// `pausepoint listen` receives a developer's events from a real service and
// re-sends them, signed, to a plain-HTTP receiver on this machine.
vi.setConfig({ testTimeout: 60_000 });

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let service: TestService;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
let answerWith = 204;
const running: RunningCli[] = [];

beforeAll(async () => {
  service = await startTestService();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(answerWith).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const cli of running.splice(0)) {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
  received.length = 0;
  answerWith = 204;
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await service?.destroy();
});

function listen(dev: Account, args: string[], extraEnv: Record<string, string> = {}) {
  const cli = startCli(['listen', ...args], {
    PAUSEPOINT_API_KEY: dev.test,
    PAUSEPOINT_BASE_URL: service.url,
    ...extraEnv,
  });
  running.push(cli);
  return cli;
}

const sign = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function eventsOf(dev: Account) {
  return (await call(service.url, 'GET', '/v1/events', { token: dev.test })).body.data as Array<{
    id: string;
    type: string;
    pause_id: string;
    payload: unknown;
  }>;
}

describe('listen', () => {
  it('forwards a real event with a valid signature, the exact body and the delivery headers', async () => {
    const dev = await registerAccount(service.url);
    const cli = listen(dev, ['--forward-to', `${receiverUrl}/hook`, '--json']);
    const [readyLine] = await cli.waitFor(/^\{"type":"ready".*\}$/m, 'stdout');
    const ready = JSON.parse(readyLine!);
    expect(ready).toMatchObject({ forward_to: `${receiverUrl}/hook`, secret_generated: true });
    expect(ready.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);

    const pause = await createPause(service.url, dev.test, { allow_text: true, metadata: { pr: 12 } });
    await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve', text: 'lgtm' } });
    await eventually(() => expect(received).toHaveLength(1), 15_000);

    const [delivery] = received;
    const [event] = await eventsOf(dev);
    expect(delivery!.path).toBe('/hook');
    expect(delivery!.body).toBe(JSON.stringify(event!.payload));
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['x-service-signature']).toBe(sign(delivery!.body, ready.secret));
    expect(delivery!.headers['x-service-event']).toBe('pause.responded');
    // As the service's own deliveries: a dlv_ id, not the event's.
    expect(delivery!.headers['x-service-delivery']).toMatch(/^dlv_[0-9a-z]{26}$/);
    // And Standard Webhooks' headers, which the standardwebhooks package verifies.
    expect(delivery!.headers['webhook-id']).toBe(delivery!.headers['x-service-delivery']);
    expect(
      new StandardWebhook(ready.secret).verify(delivery!.body, delivery!.headers as Record<string, string>),
    ).toMatchObject({ event: 'pause.responded' });
    expect(JSON.parse(delivery!.body)).toMatchObject({
      event: 'pause.responded',
      pause_id: pause.id,
      developer_id: dev.id,
      data: { choice: 'approve', text: 'lgtm', metadata: { pr: 12 } },
    });

    const [forwardedLine] = await cli.waitFor(/^\{"type":"forwarded".*\}$/m, 'stdout');
    expect(JSON.parse(forwardedLine!)).toEqual({
      type: 'forwarded',
      event_id: event!.id,
      event: 'pause.responded',
      pause_id: pause.id,
      delivery_id: delivery!.headers['x-service-delivery'],
      ok: true,
      status: 204,
    });
  });

  it('signs with the given secret, forwards only the chosen types, and reports a failing receiver', async () => {
    const dev = await registerAccount(service.url);
    const secret = 'whsec_from_the_environment_01';
    const cli = listen(dev, ['--forward-to', `${receiverUrl}/only-cancel`, '--event', 'pause.cancelled'], {
      PAUSEPOINT_WEBHOOK_SECRET: secret,
    });
    await cli.waitFor(/Ctrl-C stops/, 'stdout');
    // A secret it was given is the user's: never echoed.
    expect(cli.stdout).toContain('Signing with the secret in PAUSEPOINT_WEBHOOK_SECRET\n');
    expect(cli.stdout).not.toContain(secret);
    expect(cli.stdout).toMatch(/Listening for test events on http:\/\/127\.0\.0\.1:\d+, forwarding to http/);

    answerWith = 500;
    const answered = await createPause(service.url, dev.test);
    await call(service.url, 'POST', `/v1/respond/${tokenOf(answered)}`, { body: { choice: 'approve' } });
    const cancelled = await createPause(service.url, dev.test);
    await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.test });

    await cli.waitFor(new RegExp(`pause\\.cancelled\\s+${cancelled.id}\\s+-> failed: HTTP 500`), 'stdout');
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['x-service-event']).toBe('pause.cancelled');
    expect(received[0]!.headers['x-service-signature']).toBe(sign(received[0]!.body, secret));
    expect(cli.stdout).not.toContain(answered.id);
  });

  it('replays earlier events with --since, each once, and stops cleanly on SIGINT', async () => {
    const dev = await registerAccount(service.url);
    const before = await createPause(service.url, dev.test);
    await call(service.url, 'DELETE', `/v1/pause/${before.id}`, { token: dev.test });
    const cli = listen(dev, [
      '--forward-to',
      `${receiverUrl}/replay`,
      '--since',
      '10m',
      '--secret',
      'whsec_0123456789abcdef',
    ]);
    await cli.waitFor(new RegExp(`${before.id}\\s+-> 204`), 'stdout');
    const after = await createPause(service.url, dev.test);
    await call(service.url, 'DELETE', `/v1/pause/${after.id}`, { token: dev.test });
    await cli.waitFor(new RegExp(`${after.id}\\s+-> 204`), 'stdout');
    expect(received.map((request) => JSON.parse(request.body).pause_id)).toEqual([before.id, after.id]);
    const deliveryIds = received.map((request) => request.headers['x-service-delivery']);
    expect(new Set(deliveryIds).size).toBe(2);
    expect(cli.stdout).toContain('Signing with the secret given by --secret\n');
    expect(cli.stdout).not.toContain('whsec_0123456789abcdef');

    cli.child.kill('SIGINT');
    const result = await cli.exited;
    expect(result.code).toBe(0);
  });

  it('with --json, names a given secret nowhere in its output', async () => {
    const dev = await registerAccount(service.url);
    const secret = 'whsec_given_on_the_command_line';
    const cli = listen(dev, ['--forward-to', `${receiverUrl}/quiet`, '--json', '--secret', secret]);
    const [readyLine] = await cli.waitFor(/^\{"type":"ready".*\}$/m, 'stdout');
    expect(JSON.parse(readyLine!)).toEqual({
      type: 'ready',
      forward_to: `${receiverUrl}/quiet`,
      secret_generated: false,
      since: expect.any(String),
    });
    expect(cli.stdout).not.toContain(secret);
  });

  it('refuses bad usage and a bad key', async () => {
    const dev = await registerAccount(service.url);
    const noTarget = listen(dev, []);
    expect((await noTarget.exited).code).toBe(2);
    expect(noTarget.stderr).toMatch(/listen needs --forward-to URL/);
    const badKey = listen(dev, ['--forward-to', receiverUrl], { PAUSEPOINT_API_KEY: `svc_test_${'0'.repeat(48)}` });
    expect((await badKey.exited).code).toBe(1);
    expect(badKey.stderr).toMatch(/unauthorized, HTTP 401/);
  });
});
