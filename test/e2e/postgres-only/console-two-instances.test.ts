import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause } from '../../helpers/pauses.js';
import { startTwoInstances, type TestService, type TwoInstances } from '../../helpers/service.js';

// Two instances of the service on one PostgreSQL database, behind a load
// balancer that sends a browser's requests to either: a console session made
// on one is served by the other, its CSRF token holds on both, and signing
// out on one ends it on both. (Only the PostgreSQL run includes this folder.)

let instances: TwoInstances;
let first: TestService;
let second: TestService;
let alice: Account;

beforeAll(async () => {
  instances = await startTwoInstances();
  ({ first, second } = instances);
  alice = await registerAccount(first.url);
});
afterAll(() => instances?.destroy());

it('serves a session on either instance and ends it on both at sign-out', async () => {
  const pause = await createPause(first.url, alice.live);
  const onFirst = new ConsoleClient(first.url);
  await onFirst.signIn(alice.email, alice.password);
  const onSecond = new ConsoleClient(second.url);
  onSecond.cookie = onFirst.cookie;

  expect((await onSecond.get(`/console/pauses/${pause.id}`)).status).toBe(200);
  // A form shown by the first instance is accepted by the second.
  const csrf = await onFirst.csrf(`/console/pauses/${pause.id}/cancel`);
  const cancelled = await onSecond.post(`/console/pauses/${pause.id}/cancel`, { csrf });
  expect(cancelled.status).toBe(303);
  const read = await call(first.url, 'GET', `/v1/pause/${pause.id}`, { token: alice.live });
  expect(read.body.status).toBe('cancelled');

  expect((await onSecond.post('/console/sign-out', { csrf })).status).toBe(303);
  expect((await onFirst.get('/console/pauses')).location).toBe('/console/sign-in');
});
