import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';
import { call, registerAccount } from '../../helpers/http.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/https-receiver.js';
import { createPause } from '../../helpers/pauses.js';
import { killAllServices, newSecretKey, type ServiceProcess, spawnService } from '../../helpers/process.js';

// On PostgreSQL the transaction that queues a delivery wakes the workers of
// every instance (NOTIFY), so a ROLE=worker process starts a delivery queued
// by a ROLE=api process within moments, not at its next look. Here the worker
// looks at its queues on its own only once a minute (QUEUE_POLL_MS), so every
// one of eight deliveries arriving within seconds can only be the wake-up:
// a bound in seconds, not in milliseconds, holds on a loaded CI machine too.
// (Only the PostgreSQL run includes this folder; SQLite processes share no
// such channel.)

const QUEUE_POLL_MS = 60_000;
/** Far below the poll: a delivery this soon was woken. */
const WOKEN_WITHIN_MS = 10_000;

let database: TestDatabase;
let receiver: HttpsReceiver;
let api: ServiceProcess;
let worker: ServiceProcess;
beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startHttpsReceiver();
  const secretKey = newSecretKey();
  const spawn = (role: 'api' | 'worker') =>
    spawnService({
      databaseUrl: database.url,
      secretKey,
      caFile: receiver.caFile,
      role,
      name: role,
      env: { QUEUE_POLL_MS: String(QUEUE_POLL_MS) },
    });
  api = await spawn('api');
  worker = await spawn('worker');
}, 60_000);
afterAll(async () => {
  await killAllServices();
  await receiver?.close();
  await database?.drop();
});

const errorsLogged = (service: ServiceProcess) => service.logs().filter((record) => Number(record.level) >= 50);

it('starts a delivery queued by the API process at once on the worker process', async () => {
  const url = api.url as string;
  const account = await registerAccount(url);
  const webhook = await call(url, 'POST', '/v1/webhooks', {
    token: account.test,
    body: { url: `${receiver.url}/hook`, events: ['pause.cancelled'], secret: 'whsec_worker_wake_0123456789' },
  });
  expect(webhook.status).toBe(201);
  for (let round = 1; round <= 8; round++) {
    const pause = await createPause(url, account.test);
    const cancelledAt = Date.now();
    expect((await call(url, 'DELETE', `/v1/pause/${pause.id}`, { token: account.test })).status).toBe(200);
    await receiver.waitForRequests(round, WOKEN_WITHIN_MS);
    expect(Date.now() - cancelledAt).toBeLessThan(WOKEN_WITHIN_MS);
  }
  expect(errorsLogged(api)).toEqual([]);
  expect(errorsLogged(worker)).toEqual([]);
}, 120_000);
