// Issue 3, target C: 10,000 pauses expiring in the same second all time out
// within 5 s of their expires_at.
//
//   npx tsx bench/mass-expiry.ts [--count=10000] [--via=api|db] [--lead=S] [--postgres]
//
// With the service running, the pauses get one expires_at, a whole second a
// few seconds ahead: --via=api (the default) creates them through POST
// /v1/pause (10 connections; the lead is sized from a measured create rate so
// all exist before it), --via=db inserts them straight into the database
// with the create route's row shape. The benchmark then polls the database
// every 50 ms until all are timed_out and reads their pause.timed_out events.
// An event's created_at (also its payload timestamp) is the worker's clock
// when it began the batch that timed the pause out; the batch commits just
// after, and the polled completion time bounds that from above.
import { setTimeout as sleep } from 'node:timers/promises';
import { checkFlags, numberFlag, parseFlags, runBenchmark } from './lib/harness.js';
import { createPausesThroughApi, insertPausesDirectly, openBenchStore } from './lib/pauses.js';
import { int, ms, table, verdict } from './lib/report.js';
import { setUpService } from './lib/service.js';
import { percentile } from './lib/stats.js';

const TARGET_MS = 5000;
const POLL_MS = 50;
/** Give up this long after expires_at. */
const GIVE_UP_MS = 60_000;

runBenchmark('bench:expiry', main, { maxMinutes: 15 });

async function main(): Promise<void> {
  const flags = parseFlags();
  checkFlags(flags, ['count', 'via', 'lead', 'postgres']);
  const count = numberFlag(flags, 'count', 10_000);
  const via = flags.get('via') ?? 'api';
  if (via !== 'db' && via !== 'api') throw new Error('--via is api or db');
  if (count > 200_000) throw new Error('--count is at most 200,000');
  const postgres = flags.has('postgres');

  const { database, service, account } = await setUpService(
    `# bench:expiry — ${int(count)} pauses expiring in the same second`,
    postgres,
  );
  const store = openBenchStore(database);
  try {
    let leadS: number;
    if (flags.has('lead')) {
      leadS = numberFlag(flags, 'lead', 0);
    } else if (via === 'api') {
      // Warm the service up and size the lead from its create rate: the
      // creates must all land before expires_at (the API refuses < 1 s ahead).
      const warm = await createPausesThroughApi({
        baseUrl: service.url,
        key: account.testKey,
        count: 1000,
        body: { title: 'warm-up', expires_in: 86_400 },
        title: 'warm-up creates',
      });
      leadS = Math.ceil((count / warm.rps) * 2 + 3);
      console.log(`warm-up: 1,000 creates at ${int(warm.rps)} req/s; lead ${leadS} s`);
    } else {
      leadS = 5;
    }
    const expiresAtMs = Math.ceil((Date.now() + leadS * 1000) / 1000) * 1000;
    const expiresAt = new Date(expiresAtMs).toISOString();
    console.log(`expires_at for all: ${expiresAt} (${((expiresAtMs - Date.now()) / 1000).toFixed(1)} s from now)`);

    let fill: string;
    if (via === 'api') {
      const figures = await createPausesThroughApi({
        baseUrl: service.url,
        key: account.testKey,
        count,
        body: { title: 'Expires with the others', expires_at: expiresAt },
        title: 'creates expiring together',
      });
      fill = `created through POST /v1/pause at ${int(figures.rps)} req/s in ${figures.durationS.toFixed(1)} s`;
    } else {
      const { seconds } = await insertPausesDirectly(store, {
        developerId: account.developerId,
        mode: 'test',
        count,
        expiresAt,
        title: 'Expires with the others',
      });
      fill = `inserted directly into the database (service running) in ${seconds.toFixed(1)} s`;
    }
    const spareMs = expiresAtMs - Date.now();
    console.log(`${fill}; ${(spareMs / 1000).toFixed(1)} s to spare before expires_at`);
    if (spareMs < 0) throw new Error('the pauses were not all in place before expires_at; pass a longer --lead');

    const ours = store.db
      .selectFrom('pauses')
      .where('developer_id', '=', account.developerId)
      .where('mode', '=', 'test')
      .where('expires_at', '=', expiresAt);
    const total = Number((await ours.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    if (total !== count) throw new Error(`expected ${count} pauses with expires_at ${expiresAt}, found ${total}`);

    // Poll until every one has timed out (bounded by GIVE_UP_MS past expires_at).
    let timedOut = 0;
    let firstSeenMs: number | undefined;
    let allSeenMs: number | undefined;
    for (let poll = 0; poll < (GIVE_UP_MS + leadS * 1000) / POLL_MS + 100; poll++) {
      const row = await store.db
        .selectFrom('pauses')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('developer_id', '=', account.developerId)
        .where('mode', '=', 'test')
        .where('status', '=', 'timed_out')
        .executeTakeFirstOrThrow();
      timedOut = Number(row.n);
      const now = Date.now();
      if (timedOut > 0) firstSeenMs ??= now;
      if (timedOut >= count) {
        allSeenMs = now;
        break;
      }
      if (now > expiresAtMs + GIVE_UP_MS) break;
      await sleep(POLL_MS);
    }

    const events = await store.db
      .selectFrom('events')
      .innerJoin('pauses', 'pauses.id', 'events.pause_id')
      .select(['events.created_at', 'events.payload', 'pauses.response_at'])
      .where('pauses.developer_id', '=', account.developerId)
      .where('pauses.expires_at', '=', expiresAt)
      .where('events.type', '=', 'pause.timed_out')
      .execute();
    let payloadMismatches = 0;
    let responseAtMismatches = 0;
    const lags = events.map((event) => {
      const payload = JSON.parse(event.payload) as { timestamp?: string };
      if (payload.timestamp !== event.created_at) payloadMismatches++;
      if (event.response_at !== expiresAt) responseAtMismatches++;
      return Date.parse(event.created_at) - expiresAtMs;
    });
    const batches = new Set(events.map((event) => event.created_at)).size;
    const last = lags.reduce((most, lag) => Math.max(most, lag), Number.NEGATIVE_INFINITY);
    const first = lags.reduce((least, lag) => Math.min(least, lag), Number.POSITIVE_INFINITY);

    console.log('');
    console.log(
      table(
        ['figure', 'value'],
        [
          ['pauses expiring together', int(count)],
          ['timed out (polled)', int(timedOut)],
          ['pause.timed_out events', int(events.length)],
          ['distinct event timestamps (worker batches)', int(batches)],
          ['first event − expires_at', ms(first)],
          ['p50 (event − expires_at)', ms(percentile(lags, 50))],
          ['p99 (event − expires_at)', ms(percentile(lags, 99))],
          ['last event − expires_at', ms(last)],
          ['first timed_out seen by polling − expires_at', firstSeenMs ? ms(firstSeenMs - expiresAtMs) : 'never'],
          ['all timed_out seen by polling − expires_at', allSeenMs ? ms(allSeenMs - expiresAtMs) : 'never'],
          ['payload timestamp ≠ created_at', int(payloadMismatches)],
          ['response_at ≠ expires_at', int(responseAtMismatches)],
        ],
      ),
    );
    console.log('');
    console.log(`fill: ${fill}; poll every ${POLL_MS} ms`);
    // The event timestamp is taken before the batch commits, so the polled
    // completion must meet the target too (it is late by at most one poll).
    const allSeenLag = allSeenMs === undefined ? Number.POSITIVE_INFINITY : allSeenMs - expiresAtMs;
    const pass =
      events.length === count && timedOut === count && first >= 0 && last <= TARGET_MS && allSeenLag <= TARGET_MS;
    console.log(
      `RESULT C: last of ${int(events.length)}/${int(count)} pause.timed_out events ${ms(last)} after expires_at, ` +
        `all seen timed_out by polling at ${allSeenMs === undefined ? 'never' : ms(allSeenLag)} ` +
        `(target <= ${TARGET_MS} ms for both): ${verdict(pass)}`,
    );
    if (first < 0) console.log(`ODD: ${lags.filter((lag) => lag < 0).length} events are timestamped before expires_at`);
  } finally {
    await store.close();
  }
}
