import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

describe('service smoke', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.destroy());

  it('registers and reads the account with either key', async () => {
    const account = await registerAccount(service.url);
    const live = await call(service.url, 'GET', '/v1/auth/me', { token: account.live });
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ id: account.id, email: account.email, plan: 'free', mode: 'live' });
    const test = await call(service.url, 'GET', '/v1/auth/me', { token: account.test });
    expect(test.body.mode).toBe('test');
  });

  it('answers /health with the database state', async () => {
    const reply = await call(service.url, 'GET', '/health');
    expect(reply).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok' } });
  });
});

describe('shutdown', () => {
  it('does not wait on a connection that never sent a request', async () => {
    const { connect } = await import('node:net');
    const graceMs = 500;
    const lone = await startTestService({ env: { SHUTDOWN_GRACE_MS: String(graceMs) } });
    const { port } = new URL(lone.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    await lone.destroy();
    socket.destroy();
    // The grace period (SHUTDOWN_GRACE_MS, 5 s by default) then the cut, not Node's 60 s header timeout.
    expect(Date.now() - started).toBeLessThan(graceMs + 3000);
  });
});
