import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventType } from '../../../src/domain/events.js';
import { newId } from '../../../src/domain/ids.js';
import { isUniqueViolation } from '../../../src/store/errors.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventsOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The database itself holds a pause to one outcome event (ARCHITECTURE.md: "One
// outcome per pause"), however many pause.voted events it has: the index
// events_by_pause, on both engines.

let service: TestService;
let account: Account;
beforeAll(async () => {
  service = await startTestService();
  account = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

function insertEvent(pause: { id: string }, type: EventType) {
  const now = new Date().toISOString();
  return service.store.db
    .insertInto('events')
    .values({
      id: newId('evt'),
      pause_id: pause.id,
      developer_id: account.id,
      mode: 'test',
      type,
      payload: '{}',
      created_at: now,
    })
    .execute();
}

it('refuses a second outcome event for a pause, of any type, and takes any number of pause.voted', async () => {
  const pause = await createPause(service.url, account.test);
  expect((await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: account.test })).status).toBe(200);

  for (const type of ['pause.cancelled', 'pause.responded', 'pause.timed_out'] as const) {
    const refused = await insertEvent(pause, type).catch((error: unknown) => error);
    expect(isUniqueViolation(refused), `${type}: ${String(refused)}`).toBe(true);
  }
  await insertEvent(pause, 'pause.voted');
  await insertEvent(pause, 'pause.voted');
  expect((await eventsOf(service, pause.id)).map((event) => event.type).sort()).toEqual([
    'pause.cancelled',
    'pause.voted',
    'pause.voted',
  ]);

  // Another pause is not held back by this one's outcome.
  const other = await createPause(service.url, account.test);
  await insertEvent(other, 'pause.responded');
});
