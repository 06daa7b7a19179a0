import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Each instance caches API keys it has seen. A rotation on one instance must
// end the old key on the others at once (PostgreSQL NOTIFY), not after the
// cache's 10 s TTL.

let database: TestDatabase;
let first: TestService;
let second: TestService;
beforeAll(async () => {
  database = await freshDatabase();
  first = await startTestService({ database });
  second = await startTestService({ database });
});
afterAll(async () => {
  await first?.destroy();
  await second?.destroy();
  await database?.drop();
});

it('refuses a rotated key on the other instance within moments, though that instance had cached it', async () => {
  const account = await registerAccount(first.url);
  const me = (service: TestService, key: string) => call(service.url, 'GET', '/v1/auth/me', { token: key });
  expect((await me(second, account.live)).status).toBe(200); // now in the second instance's cache

  const rotated = await call(first.url, 'POST', '/v1/auth/keys/rotate', { token: account.live });
  expect(rotated.status).toBe(200);

  const deadline = Date.now() + 2_000;
  let status = (await me(second, account.live)).status;
  while (status === 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = (await me(second, account.live)).status;
  }
  expect(status).toBe(401);
  expect((await me(second, rotated.body.key)).status).toBe(200);
  expect((await me(second, account.test)).status).toBe(200); // the other mode's key is untouched
});
