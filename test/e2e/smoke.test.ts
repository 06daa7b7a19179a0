import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

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
