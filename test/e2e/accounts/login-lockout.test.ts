import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerAccount } from '../../helpers/http.js';
import { sleep } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Strangers guessing someone's password must not lock the owner out, and
// guessing must stay limited. AUTH_RATE_LIMIT=5/2: five attempts at once,
// then one every 400 ms per account, from whatever address (X-Forwarded-For,
// trusted here). The wall of five attempts per 2 s per client address is
// tested in test/e2e/accounts/register-and-login.test.ts.

const SPACING_MS = 400;

describe('login back-off per account', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { AUTH_RATE_LIMIT: '5/2', TRUST_PROXY: 'true' } });
  });
  afterAll(() => service?.destroy());

  let addresses = 0;
  /** A client address not used before in this file. */
  const freshAddress = () => {
    addresses += 1;
    return `198.51.100.${addresses}`;
  };
  const login = (email: string, password: string, from = freshAddress()) =>
    call(service.url, 'POST', '/v1/auth/login', {
      body: { email, password },
      headers: { 'x-forwarded-for': from },
    });

  it("lets the owner's correct password in from a fresh address after ten strangers' wrong ones", async () => {
    const owner = await registerAccount(service.url);
    const startedAt = Date.now();
    const strangers = [];
    for (let i = 0; i < 10; i++) strangers.push((await login(owner.email, `wrong password ${i}`)).status);
    expect(strangers).toEqual(Array(10).fill(401));
    // The last five waited for their turn, one spacing apart.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(4 * SPACING_MS);

    const ownerLogin = await login(owner.email, owner.password);
    expect(ownerLogin.status, ownerLogin.text).toBe(200);
    expect(ownerLogin.body.session.token).toMatch(/^svc_sess_[0-9a-f]{48}$/);
  });

  it('still limits guessing: of twelve simultaneous guesses from twelve addresses, about six are checked', async () => {
    const owner = await registerAccount(service.url);
    const guesses = await Promise.all(Array.from({ length: 12 }, (_, i) => login(owner.email, `wrong password ${i}`)));
    const refused = guesses.filter((reply) => reply.status === 429);
    // Five go through at once and one more waits its turn; a slow machine may
    // spread the burst and let a few more in, never most of it.
    expect(guesses.filter((reply) => reply.status === 401).length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.length + guesses.filter((reply) => reply.status === 401).length).toBe(12);
    for (const reply of refused) {
      expect(reply.body.error.code).toBe('rate_limited');
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(reply.text).not.toContain('svc_sess_');
    }

    // Once the guesses stop, the owner gets in after the wait they were told.
    const retryAfter = Math.max(...refused.map((reply) => Number(reply.headers.get('retry-after'))));
    await sleep(retryAfter * 1000);
    expect((await login(owner.email, owner.password)).status).toBe(200);
  });
});

describe('login back-off per account, on a clock that stands still', () => {
  // The bucket drains only as the service's clock moves: standing still, the
  // test cannot be fooled by a slow machine (a login takes a scrypt hash,
  // and five of them under load once outlasted the 2 s window).
  let service: TestService;
  beforeAll(async () => {
    const now = Date.now();
    service = await startTestService({
      env: { AUTH_RATE_LIMIT: '5/2', TRUST_PROXY: 'true' },
      clock: { now: () => new Date(now) },
    });
  });
  afterAll(() => service?.destroy());

  let addresses = 0;
  const login = (email: string, password: string) => {
    addresses += 1;
    return call(service.url, 'POST', '/v1/auth/login', {
      body: { email, password },
      headers: { 'x-forwarded-for': `203.0.113.${addresses}` },
    });
  };

  it('gives guessers no fresh burst when the owner logs in between their guesses', async () => {
    const owner = await registerAccount(service.url);
    for (let i = 0; i < 5; i++) expect((await login(owner.email, `wrong password ${i}`)).status).toBe(401);
    expect((await login(owner.email, owner.password)).status).toBe(200);
    // Were the owner's login to reset the account, five more guesses would go
    // through at once; as it is, the bucket is full and every one is refused.
    const guesses = await Promise.all([0, 1, 2].map((i) => login(owner.email, `wrong again ${i}`)));
    expect(guesses.map((reply) => reply.status)).toEqual([429, 429, 429]);
  });
});
