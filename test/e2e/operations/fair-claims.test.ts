import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { isoTime } from '../../../src/domain/clock.js';
import { newId } from '../../../src/domain/ids.js';
import { claimDeliveries } from '../../../src/store/deliveries.js';
import { type Claim, claimDue, type OutboxTable, settleSucceeded } from '../../../src/store/outbox.js';
import { migrateToLatest, openStore, type Store } from '../../../src/store/store.js';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';

// Claims share each batch between developers: one developer's backlog of due
// rows cannot keep another's one row out of the next batch. Run against the
// store directly (no worker), on the engine of this run.

let database: TestDatabase;
let store: Store;
beforeAll(async () => {
  database = await freshDatabase();
  store = openStore(loadConfig({ DATABASE_URL: database.url, SECRET_KEY: 'a'.repeat(64) }).database);
  await migrateToLatest(store);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});
beforeEach(async () => {
  await store.db.deleteFrom('deliveries').execute();
  await store.db.deleteFrom('notifications').execute();
});

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const at = (ms: number) => isoTime(new Date(T0 + ms));
/** After every row below fell due. */
const NOW = at(3_600_000);

interface Owner {
  developerId: string;
  webhookId: string;
  eventId: string;
  pauseId: string;
}

async function owner(): Promise<Owner> {
  const developerId = newId('dev');
  const ids = { developerId, webhookId: newId('wh'), eventId: newId('evt'), pauseId: newId('pause') };
  const created_at = at(0);
  await store.db
    .insertInto('developers')
    .values({ id: developerId, email: `${developerId}@example.com`, password_hash: 'x', plan: 'free', created_at })
    .execute();
  await store.db
    .insertInto('webhooks')
    .values({
      id: ids.webhookId,
      developer_id: developerId,
      mode: 'test',
      url: 'https://example.com/hook',
      events: '["pause.cancelled"]',
      secret_sealed: 'x',
      created_at,
    })
    .execute();
  await store.db
    .insertInto('pauses')
    .values({
      id: ids.pauseId,
      developer_id: developerId,
      mode: 'live',
      status: 'cancelled',
      title: 'q',
      body: null,
      options: '["approve","reject"]',
      allow_text: 0,
      expires_at: at(86_400_000),
      timeout_default: null,
      metadata: '{}',
      notify: null,
      response_choice: null,
      response_text: null,
      response_at: null,
      created_at,
      updated_at: created_at,
    })
    .execute();
  await store.db
    .insertInto('events')
    .values({
      id: ids.eventId,
      pause_id: ids.pauseId,
      developer_id: developerId,
      mode: 'test',
      type: 'pause.cancelled',
      payload: '{}',
      created_at,
    })
    .execute();
  return ids;
}

const queueColumns = (dueAt: string) => ({
  status: 'pending' as const,
  attempts: 0,
  next_attempt_at: dueAt,
  last_status_code: null,
  last_error: null,
  created_at: dueAt,
  updated_at: dueAt,
  completed_at: null,
});

/** `count` pending rows of `who` in `table`, falling due one millisecond apart from `firstDueMs`. */
async function due(table: OutboxTable, who: Owner, count: number, firstDueMs: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 500) {
    const slice = Array.from({ length: Math.min(500, count - start) }, (_, i) => at(firstDueMs + start + i));
    if (table === 'deliveries') {
      const rows = slice.map((dueAt) => ({
        id: newId('dlv'),
        webhook_id: who.webhookId,
        event_id: who.eventId,
        developer_id: who.developerId,
        ...queueColumns(dueAt),
      }));
      await store.db.insertInto('deliveries').values(rows).execute();
      ids.push(...rows.map((row) => row.id));
    } else {
      const rows = slice.map((dueAt) => ({
        id: newId('ntf'),
        pause_id: who.pauseId,
        developer_id: who.developerId,
        channel: 'email' as const,
        recipient: 'someone@example.com',
        target_sealed: null,
        subject: 'q',
        text_body: 'q',
        html_body: null,
        reviewer_id: null,
        kind: 'question' as const,
        ...queueColumns(dueAt),
      }));
      await store.db.insertInto('notifications').values(rows).execute();
      ids.push(...rows.map((row) => row.id));
    }
  }
  return ids;
}

const claim = (table: OutboxTable, limit: number) =>
  claimDue(store, table, { now: NOW, leaseUntil: at(7_200_000), limit });

async function ownersOf(table: OutboxTable, ids: string[]): Promise<Map<string, number>> {
  const rows = await store.db
    .selectFrom(table)
    .select('developer_id')
    .where('id', 'in', ids.length > 0 ? ids : [''])
    .execute();
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.developer_id, (counts.get(row.developer_id) ?? 0) + 1);
  return counts;
}

it.each([
  ['deliveries', 64],
  ['notifications', 32],
] as const)(
  "puts a developer's one due row in the first batch of %s behind another's backlog",
  async (table, batch) => {
    const [flooder, quiet] = [await owner(), await owner()];
    await due(table, flooder, 2000, 0);
    const [single] = await due(table, quiet, 1, 60_000);

    const first = await claim(table, batch);
    expect(first).toHaveLength(batch);
    expect(first.map((c) => c.id)).toContain(single);
    expect(
      await ownersOf(
        table,
        first.map((c) => c.id),
      ),
    ).toEqual(
      new Map([
        [flooder.developerId, batch - 1],
        [quiet.developerId, 1],
      ]),
    );
    expect(first.every((c) => c.attempts === 1)).toBe(true);
  },
);

it('shares a batch round by round, fills it, and takes each developer’s oldest rows first', async () => {
  const [big, medium, small] = [await owner(), await owner(), await owner()];
  const bigIds = await due('deliveries', big, 300, 0);
  const mediumIds = await due('deliveries', medium, 10, 1000);
  const smallIds = await due('deliveries', small, 2, 2000);
  // Not yet due: never claimed.
  await due('deliveries', small, 5, 7_200_000);

  const ids = (await claim('deliveries', 64)).map((c) => c.id);
  expect(ids).toHaveLength(64);
  expect(new Set(ids)).toEqual(new Set([...smallIds, ...mediumIds, ...bigIds.slice(0, 52)]));

  // The next batch goes on with the rest of the backlog, oldest first.
  const next = (await claim('deliveries', 64)).map((c) => c.id);
  expect(new Set(next)).toEqual(new Set(bigIds.slice(52, 116)));
});

it('claims everything due when there is less than a batch', async () => {
  const [a, b] = [await owner(), await owner()];
  const ids = [...(await due('notifications', a, 20, 0)), ...(await due('notifications', b, 3, 10))];
  const claimed = await claim('notifications', 32);
  expect(new Set(claimed.map((c) => c.id))).toEqual(new Set(ids));
  expect(await claim('notifications', 32)).toEqual([]);
});

it('gives concurrent claims disjoint rows, each a full batch when there is work for both', async () => {
  const [a, b] = [await owner(), await owner()];
  await due('deliveries', a, 400, 0);
  await due('deliveries', b, 3, 500);
  const batches = await Promise.all([claim('deliveries', 64), claim('deliveries', 64)]);
  const ids = batches.flat().map((c) => c.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(batches.map((batch) => batch.length)).toEqual([64, 64]);
  expect((await ownersOf('deliveries', ids)).get(b.developerId)).toBe(3);
});

it('settles many successes in one statement, but only rows whose claim is still ours', async () => {
  const who = await owner();
  await due('deliveries', who, 4, 0);
  const claims = await claimDue(store, 'deliveries', { now: NOW, leaseUntil: at(3_700_000), limit: 4 });
  expect(claims).toHaveLength(4);
  const [kept, ok201, takenOver, alsoKept] = claims as [Claim, Claim, Claim, Claim];
  // Its lease ran out and another worker claimed it again: attempts moved on.
  await store.db.updateTable('deliveries').set({ attempts: 2 }).where('id', '=', takenOver.id).execute();
  // A second attempt of ours, settled in the same batch as first attempts.
  await store.db.updateTable('deliveries').set({ attempts: 2 }).where('id', '=', alsoKept.id).execute();
  const secondAttempt = { ...alsoKept, attempts: 2 };

  const settled = await settleSucceeded(
    store,
    'deliveries',
    [kept, ok201, takenOver, secondAttempt].map((claim) => ({ claim, statusCode: claim === ok201 ? 201 : 200 })),
    NOW,
  );
  expect([...settled.keys()].sort()).toEqual([kept.id, ok201.id, alsoKept.id].sort());
  const rows = await store.db.selectFrom('deliveries').select(['id', 'status', 'last_status_code']).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  expect(byId.get(kept.id)).toMatchObject({ status: 'succeeded', last_status_code: 200 });
  expect(byId.get(ok201.id)).toMatchObject({ status: 'succeeded', last_status_code: 201 });
  expect(byId.get(takenOver.id)).toMatchObject({ status: 'pending', last_status_code: null });
  expect(byId.get(alsoKept.id)).toMatchObject({ status: 'succeeded', last_status_code: 200 });
});

it('claims deliveries with what their attempt needs: webhook and event, in one statement on PostgreSQL', async () => {
  const [a, b] = [await owner(), await owner()];
  const ids = [...(await due('deliveries', a, 3, 0)), ...(await due('deliveries', b, 2, 10))];
  const claimed = await claimDeliveries(store, { now: NOW, leaseUntil: at(7_200_000), limit: 64 });
  expect(new Set(claimed.map((delivery) => delivery.id))).toEqual(new Set(ids));
  for (const delivery of claimed) {
    const who = ids.indexOf(delivery.id) < 3 ? a : b;
    expect(delivery).toMatchObject({
      attempts: 1,
      webhook_id: who.webhookId,
      url: 'https://example.com/hook',
      secret_sealed: 'x',
      previous_secret_sealed: null,
      disabled_at: null,
      failing_since: null,
      type: 'pause.cancelled',
      payload: '{}',
    });
  }
  // Oldest first, as claimed.
  expect(claimed.map((delivery) => delivery.id)).toEqual(ids);
  const rows = await store.db.selectFrom('deliveries').select(['attempts', 'next_attempt_at']).execute();
  expect(rows.every((row) => row.attempts === 1 && row.next_attempt_at === at(7_200_000))).toBe(true);
  expect(await claimDeliveries(store, { now: NOW, leaseUntil: at(7_200_000), limit: 64 })).toEqual([]);
});

it('claims a full batch fairly with what the attempts need, in the order the fair claim chose', async () => {
  const [big, medium, small] = [await owner(), await owner(), await owner()];
  const owners = [
    { who: big, ids: await due('deliveries', big, 300, 0) },
    { who: medium, ids: await due('deliveries', medium, 10, 1000) },
    { who: small, ids: await due('deliveries', small, 2, 2000) },
  ];
  // Round by round; in a round, the developer due longest first.
  const expected: string[] = [];
  for (let round = 0; expected.length < 64; round++) {
    for (const { ids } of owners) if (round < ids.length && expected.length < 64) expected.push(ids[round]!);
  }

  const claimed = await claimDeliveries(store, { now: NOW, leaseUntil: at(7_200_000), limit: 64 });
  expect(new Set(claimed.map((delivery) => delivery.id))).toEqual(new Set(expected));
  expect(claimed.map((delivery) => delivery.id)).toEqual(expected);
  for (const delivery of claimed) {
    const { who } = owners.find(({ ids }) => ids.includes(delivery.id))!;
    expect(delivery).toMatchObject({
      attempts: 1,
      webhook_id: who.webhookId,
      url: 'https://example.com/hook',
      secret_sealed: 'x',
      type: 'pause.cancelled',
      payload: '{}',
    });
  }
});

it('settles the newer of two claims of one delivery in the same batch, with its attempt only', async () => {
  const [a] = [await owner()];
  await due('deliveries', a, 1, 0);
  const [older] = (await claimDue(store, 'deliveries', { now: NOW, leaseUntil: at(3_700_000), limit: 64 })) as [Claim];
  // Its lease ran out and this worker claimed it again before the first settle.
  await store.db.updateTable('deliveries').set({ attempts: 2 }).where('id', '=', older.id).execute();
  const newer = { ...older, attempts: 2 };
  const rows = [older, newer].map((claim, i) => ({
    claim,
    statusCode: 200,
    attempt: {
      delivery_id: claim.id,
      webhook_id: a.webhookId,
      at: at(3_600_100 + i),
      duration_ms: 10 + i,
      status_code: 200,
      response_body: null,
      error: null,
    },
  }));

  const settled = await settleSucceeded(store, 'deliveries', rows, NOW);
  expect([...settled]).toEqual([[older.id, 2]]);
  const attempts = await store.db.selectFrom('delivery_attempts').selectAll().execute();
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatchObject(rows[1]!.attempt);
});

it('settles many successes with their attempts kept: one attempt row per delivery settled, none for a claim taken over', async () => {
  const [a, b] = [await owner(), await owner()];
  await due('deliveries', a, 3, 0);
  await due('deliveries', b, 1, 10);
  await store.db
    .updateTable('webhooks')
    .set({ failing_since: at(5) })
    .where('id', '=', a.webhookId)
    .execute();
  const claims = await claimDue(store, 'deliveries', { now: NOW, leaseUntil: at(3_700_000), limit: 4 });
  const webhookOf = new Map(
    (await store.db.selectFrom('deliveries').select(['id', 'webhook_id']).execute()).map((row) => [
      row.id,
      row.webhook_id,
    ]),
  );
  const [takenOver, ...kept] = claims as [Claim, ...Claim[]];
  await store.db.updateTable('deliveries').set({ attempts: 2 }).where('id', '=', takenOver.id).execute();
  const rows = claims.map((claim, i) => ({
    claim,
    statusCode: 200 + i,
    attempt: {
      delivery_id: claim.id,
      webhook_id: webhookOf.get(claim.id) as string,
      at: at(3_600_100 + i),
      duration_ms: 10 + i,
      status_code: 200 + i,
      response_body: i === 1 ? 'it\'s "ok", {a,b} \\ ü' : null,
      error: null,
    },
  }));

  const settled = await settleSucceeded(store, 'deliveries', rows, NOW);
  expect([...settled.keys()].sort()).toEqual(kept.map((claim) => claim.id).sort());
  const attempts = await store.db.selectFrom('delivery_attempts').selectAll().execute();
  expect(attempts.map((attempt) => attempt.delivery_id).sort()).toEqual([...settled.keys()].sort());
  for (const attempt of attempts) {
    const { attempt: written } = rows.find((row) => row.claim.id === attempt.delivery_id)!;
    expect(attempt).toMatchObject(written);
    expect(attempt.id).toMatch(/^att_/);
  }
  const deliveries = await store.db.selectFrom('deliveries').select(['id', 'status', 'last_status_code']).execute();
  for (const delivery of deliveries) {
    const i = claims.findIndex((claim) => claim.id === delivery.id);
    expect(delivery).toMatchObject(
      delivery.id === takenOver.id
        ? { status: 'pending', last_status_code: null }
        : { status: 'succeeded', last_status_code: 200 + i },
    );
  }
  // A 2xx ends its webhook's failing streak.
  const streak = await store.db.selectFrom('webhooks').select('failing_since').where('id', '=', a.webhookId).execute();
  expect(streak).toEqual([{ failing_since: null }]);
});
