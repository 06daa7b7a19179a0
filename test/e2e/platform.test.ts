import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// What every endpoint shares: errors, body handling, request ids, health, the
// API reference, and what reaches the log.

const PASSWORD = 'platform password 1';

describe('platform', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.destroy());

  describe('log secrecy', () => {
    it('never logs a key, a password, a session token or an Authorization header', async () => {
      const email = `secrets.${Date.now()}@example.com`;
      const wrongPassword = 'wrong-password-9f3c1e';
      const basic = Buffer.from(`${email}:${PASSWORD}`).toString('base64');
      const unknownKey = `svc_live_${'5ec2e7'.repeat(8)}`;
      const first = service.logs.length;

      const registered = await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } });
      expect(registered.status).toBe(201);
      const { live, test } = registered.body.keys as { live: string; test: string };
      const loggedIn = await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
      const session: string = loggedIn.body.session.token;
      expect(
        (await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: wrongPassword } })).status,
      ).toBe(401);
      expect(
        (await call(service.url, 'POST', '/v1/auth/login', { body: { email: `x${email}`, password: wrongPassword } }))
          .status,
      ).toBe(401);
      // A refused body that carries a password.
      expect(
        (await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD, extra: PASSWORD } }))
          .status,
      ).toBe(400);
      expect((await call(service.url, 'GET', '/v1/auth/me', { token: live })).status).toBe(200);
      expect((await call(service.url, 'GET', '/v1/auth/me', { token: session })).status).toBe(200);
      const rotated = await call(service.url, 'POST', '/v1/auth/keys/rotate', { token: live });
      expect(rotated.status).toBe(200);
      const rotatedBySession = await call(service.url, 'POST', '/v1/auth/keys/rotate?mode=test', { token: session });
      expect(rotatedBySession.status).toBe(200);
      expect((await call(service.url, 'GET', '/v1/auth/me', { token: live })).status).toBe(401); // the old key
      expect((await call(service.url, 'GET', '/v1/auth/me', { token: unknownKey })).status).toBe(401);
      expect(
        (await call(service.url, 'GET', '/v1/auth/me', { headers: { authorization: `Basic ${basic}` } })).status,
      ).toBe(401);

      const lines = service.logs.slice(first);
      // The log did capture these requests, so its silence about secrets means something.
      const entries = lines.map((line) => JSON.parse(line));
      expect(entries.filter((e) => e.req?.url === '/v1/auth/login').length).toBeGreaterThanOrEqual(4);
      expect(entries.some((e) => e.req?.url === '/v1/auth/keys/rotate?mode=test')).toBe(true);

      const log = lines.join('');
      const secrets = {
        live,
        test,
        newLive: rotated.body.key,
        newTest: rotatedBySession.body.key,
        session,
        password: PASSWORD,
        wrongPassword,
        basic,
        unknownKey,
      };
      for (const [name, secret] of Object.entries(secrets)) {
        expect(log.includes(secret), `${name} is in the log`).toBe(false);
        // Not even the random part after the display prefix.
        expect(log.includes(secret.slice(15)), `part of ${name} is in the log`).toBe(false);
      }
      expect(log).not.toMatch(/svc_(live|test|sess)_[0-9a-f]{7,}/);
      expect(log).not.toMatch(/bearer|basic /i);
      for (const entry of entries) {
        expect(JSON.stringify(entry.req?.headers ?? {})).not.toMatch(/authorization/i);
        expect(entry.headers?.authorization ?? '[redacted]').toBe('[redacted]');
      }
    });
  });
});
