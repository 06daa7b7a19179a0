import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';
import { call, registerAccount } from '../../helpers/http.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/https-receiver.js';
import { createPause, sleep } from '../../helpers/pauses.js';
import { killAllServices, newSecretKey, type ServiceProcess, spawnService } from '../../helpers/process.js';

// An idle worker sleeps up to a second between looks at its queues. On
// PostgreSQL the transaction that queues a delivery wakes the workers of
// every instance (NOTIFY), so a ROLE=worker process starts a delivery queued
// by a ROLE=api process within moments, not at its next look. Were it the
// poll, each of eight deliveries would wait 0–1000 ms, and all eight under
// 400 ms would happen less than once in a thousand runs (0.4^8). The bound
// leaves room for a busy CI machine: 250 ms was once missed by 7 ms. (Only
// the PostgreSQL run includes this folder; SQLite processes share no such
// channel.)

let database: TestDatabase;
let receiver: HttpsReceiver;
let api: ServiceProcess;
let worker: ServiceProcess;
beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startHttpsReceiver();
  const secretKey = newSecretKey();
  const spawn = (role: 'api' | 'worker') =>
    spawnService({ databaseUrl: database.url, secretKey, caFile: receiver.caFile, role, name: role });
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
    await sleep(300 + Math.random() * 700); // lands anywhere in the worker's sleep
    const cancelledAt = Date.now();
    expect((await call(url, 'DELETE', `/v1/pause/${pause.id}`, { token: account.test })).status).toBe(200);
    await receiver.waitForRequests(round, 3000);
    expect(Date.now() - cancelledAt).toBeLessThan(400);
  }
  expect(errorsLogged(api)).toEqual([]);
  expect(errorsLogged(worker)).toEqual([]);
}, 40_000);
