import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/https-receiver.js';
import { createPause } from '../../helpers/pauses.js';
import { killAllServices, newSecretKey, type ServiceProcess, spawnService } from '../../helpers/process.js';

// One developer floods a slow receiver; another's delivery must not wait for
// that backlog to drain. Developer A has WEBHOOKS × PAUSES deliveries due, each
// answered after SLOW_MS, so batches of 64 drain it in about
// WEBHOOKS × PAUSES / 64 × SLOW_MS (~15 s). B's one delivery is claimed in the
// first batch after it is written: it waits at most for the batch in flight.
//
// The service runs as its own process and trusts the receivers' CA through
// NODE_EXTRA_CA_CERTS, as in production: in-process, the test CA is handed to
// every TLS connection, which makes 64 new connections a slow affair.

const SLOW_MS = 1500;
const SLOWEST_MS = 4000;
const WEBHOOKS = 10;
const PAUSES = 64;
const SECRET = 'whsec_0123456789abcdef';
/** The outbound timeout of the service that serves a receiver turning slow (the last test). */
const TURNING_TIMEOUT_MS = 3000;

let database: TestDatabase;
let service: ServiceProcess;
let url: string;
let slow: HttpsReceiver;
let fast: HttpsReceiver;
let slowest: HttpsReceiver;
let turning: HttpsReceiver;
let turningDatabase: TestDatabase | undefined;

beforeAll(async () => {
  slow = await startHttpsReceiver({ defaultResponse: { delayMs: SLOW_MS } });
  fast = await startHttpsReceiver();
  slowest = await startHttpsReceiver({ defaultResponse: { delayMs: SLOWEST_MS } });
  turning = await startHttpsReceiver();
  database = await freshDatabase();
  service = await spawnService({
    databaseUrl: database.url,
    secretKey: newSecretKey(),
    caFile: slow.caFile,
    env: { API_RATE_LIMIT: '100000/60' },
  });
  url = service.url!;
});
afterAll(async () => {
  await killAllServices();
  await database?.drop();
  await turningDatabase?.drop();
  await turning?.close();
  await slow?.close();
  await fast?.close();
  await slowest?.close();
});

async function addWebhook(dev: Account, target: string, serviceUrl = url) {
  const body = { url: target, events: ['pause.cancelled'], secret: SECRET };
  const reply = await call(serviceUrl, 'POST', '/v1/webhooks', { token: dev.test, body });
  expect(reply.status, reply.text).toBe(201);
}

async function cancel(dev: Account, pauseId: string, serviceUrl = url) {
  const reply = await call(serviceUrl, 'DELETE', `/v1/pause/${pauseId}`, { token: dev.test });
  expect(reply.status, reply.text).toBe(200);
}

it('sends a new delivery while an earlier attempt is still waiting on a slow receiver', async () => {
  const [a, b] = [await registerAccount(url), await registerAccount(url)];
  await addWebhook(a, `${slowest.url}/a`);
  await addWebhook(b, `${fast.url}/prompt`);
  const [held, prompt] = [await createPause(url, a.test), await createPause(url, b.test)];
  await cancel(a, held.id);
  await slowest.waitForRequests(1, 10_000); // A's attempt is out, and will be for SLOWEST_MS
  const cancelledAt = Date.now();
  await cancel(b, prompt.id);
  const [delivered] = await fast.waitForRequests(1, 10_000);
  // A worker that waited for its whole batch would send this after SLOWEST_MS.
  expect(delivered!.receivedAt - cancelledAt).toBeLessThan(SLOWEST_MS / 2);
  expect(delivered!.path).toBe('/prompt');
}, 30_000);

it("delivers a developer's event promptly while another's backlog waits on a slow receiver", async () => {
  fast.reset();
  const [a, b] = [await registerAccount(url), await registerAccount(url)];
  for (let i = 0; i < WEBHOOKS; i++) await addWebhook(a, `${slow.url}/a/${i}`);
  await addWebhook(b, `${fast.url}/b`);
  const flood = await Promise.all(Array.from({ length: PAUSES }, () => createPause(url, a.test)));
  const quiet = await createPause(url, b.test);

  for (let i = 0; i < flood.length; i += 8) {
    await Promise.all(flood.slice(i, i + 8).map((pause) => cancel(a, pause.id)));
  }
  const cancelledAt = Date.now();
  await cancel(b, quiet.id);

  const [delivered] = await fast.waitForRequests(1, 30_000);
  // A's backlog is far from drained: B did not wait for it.
  expect(slow.requests.length).toBeLessThan(WEBHOOKS * PAUSES - 64);
  // At most the batch in flight (SLOW_MS) and a claim; generous for a busy machine.
  expect(delivered!.receivedAt - cancelledAt).toBeLessThan(SLOW_MS + 4000);
}, 60_000);

// A's receiver answers at once while its backlog drains, so the worker claims
// a few batches ahead; then it answers no more, and every attempt runs to the
// outbound timeout. The rows claimed ahead must not keep B's new delivery
// waiting for wave after wave of timeouts: about one timeout (the attempts
// out when B's row is written), then a claim.
it("sends another developer's delivery within about one timeout when a quick receiver turns slow", async () => {
  const webhooks = 20;
  const turnAfter = 300;
  turningDatabase = await freshDatabase();
  const other = await spawnService({
    name: 'service-turning',
    databaseUrl: turningDatabase.url,
    secretKey: newSecretKey(),
    caFile: turning.caFile,
    env: { API_RATE_LIMIT: '100000/60', OUTBOUND_TIMEOUT_MS: String(TURNING_TIMEOUT_MS) },
  });
  const otherUrl = other.url!;
  let answered = 0;
  turning.setDefault(() => (++answered > turnAfter ? { hang: true } : {}));
  const [a, b] = [await registerAccount(otherUrl), await registerAccount(otherUrl)];
  for (let i = 0; i < webhooks; i++) await addWebhook(a, `${turning.url}/a/${i}`, otherUrl);
  await addWebhook(b, `${fast.url}/after-turn`, otherUrl);
  const flood = await Promise.all(Array.from({ length: PAUSES }, () => createPause(otherUrl, a.test)));
  const quiet = await createPause(otherUrl, b.test);
  await Promise.all(flood.map((pause) => cancel(a, pause.id, otherUrl)));

  // Every slot is waiting on the dark receiver now.
  await turning.waitForRequests(turnAfter + 64, 30_000);
  const cancelledAt = Date.now();
  await cancel(b, quiet.id, otherUrl);
  const [delivered] = await fast.waitForRequests(1, 30_000, (request) => request.path === '/after-turn');
  // Rows claimed ahead that waited their turn would hold it two to four
  // timeouts; the bound leaves a loaded machine most of a second timeout.
  expect(delivered!.receivedAt - cancelledAt).toBeLessThan(TURNING_TIMEOUT_MS + 2000);
}, 90_000);
