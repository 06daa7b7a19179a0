// Issue 17: the console's pages with a big account. One developer has
// 1,000,000 live pauses and another 100,000; each page must render
// server-side with p99 under 50 ms on SQLite (PostgreSQL reported), and weigh
// under 60 KB with its CSS and JS.
//
//   npx tsx bench/console-pages.ts [--pauses=1000000] [--other=100000]
//                                  [--requests=300] [--postgres]
//
// The pauses go straight into the database (the create route's row shape,
// through the project's store, so the text index's trigger fills on SQLite),
// created over the last 30 days, with titles from a small vocabulary and
// statuses mixed as a busy account has them: 2% pending, 80% responded, 13%
// timed out, 5% cancelled. Then, signed in to the console as each developer,
// one request at a time as a person clicks (after a warm-up), it times:
//   list     /console/pauses, and pages further down through random cursors;
//   status   the list filtered by each status;
//   search   title searches: a word in 1 title of 10, two words that meet in
//            about 1 of 100, a word in 1 of 1,000, and a word in none;
//   pause    /console/pauses/{id} for random pauses.
// Latency is from sending the request to the last byte here.
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import type { PausesTable } from '../src/store/schema.js';
import type { Store } from '../src/store/store.js';
import { signIn } from './lib/console.js';
import { checkFlags, numberFlag, parseFlags, runBenchmark } from './lib/harness.js';
import { openBenchStore, pauseIds, pendingPauseRow, titlesIndexed } from './lib/pauses.js';
import { int, ms, table, verdict } from './lib/report.js';
import { register, setUpService } from './lib/service.js';
import { percentile } from './lib/stats.js';

const TARGET_P99_MS = 50;
const TARGET_PAGE_BYTES = 60 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 500;

const VERBS = ['Deploy', 'Refund', 'Merge', 'Delete', 'Send', 'Approve', 'Rotate', 'Publish', 'Restart', 'Transfer'];
const OBJECTS = [
  'api',
  'billing',
  'order',
  'invoice',
  'branch',
  'newsletter',
  'database',
  'cluster',
  'account',
  'payout',
];
/** One title in 1,000 carries this word. */
const RARE_WORD = 'chargeback';

runBenchmark('bench:console', main, { maxMinutes: 40 });

/** The n-th pause's title: verb and object each cycle through ten, so each word is in 1 of 10 titles. */
function titleOf(n: number): string {
  const verb = VERBS[n % 10]!;
  const object = OBJECTS[Math.floor(n / 10) % 10]!;
  return `${verb} ${object} #${n}${n % 1000 === 7 ? ` after ${RARE_WORD}` : ''}?`;
}

function statusOf(n: number): PausesTable['status'] {
  const r = n % 100;
  return r < 2 ? 'pending' : r < 82 ? 'responded' : r < 95 ? 'timed_out' : 'cancelled';
}

/** `count` live pauses for the developer, oldest first, spread over the last 30 days. */
async function fill(store: Store, developerId: string, count: number): Promise<{ seconds: number; sample: string[] }> {
  const started = performance.now();
  const sample: string[] = [];
  const first = Date.now() - 30 * DAY_MS;
  const step = (30 * DAY_MS) / count;
  for (let done = 0; done < count; done += BATCH) {
    const size = Math.min(BATCH, count - done);
    const createdMs = Math.floor(first + done * step);
    const createdAt = new Date(createdMs).toISOString();
    const ids = pauseIds(size, createdMs).sort();
    const rows = ids.map((id, i): PausesTable => {
      const n = done + i;
      const status = statusOf(n);
      const expiresAt = new Date(status === 'pending' ? Date.now() + 29 * DAY_MS : createdMs + DAY_MS).toISOString();
      const row = pendingPauseRow({ developerId, mode: 'live', expiresAt, title: titleOf(n) }, id, createdAt);
      if (status === 'pending') return row;
      const answered = status === 'responded';
      return {
        ...row,
        status,
        response_choice: answered ? 'approve' : null,
        response_at: status === 'timed_out' ? expiresAt : createdAt,
        updated_at: createdAt,
      };
    });
    sample.push(ids[randomInt(ids.length)]!); // one random pause of each batch
    await store.db.transaction().execute((trx) => trx.insertInto('pauses').values(rows).execute());
  }
  return { seconds: (performance.now() - started) / 1000, sample };
}

interface Timed {
  name: string;
  latencies: number[];
  bytes: number;
}

async function main(): Promise<void> {
  const flags = parseFlags();
  checkFlags(flags, ['pauses', 'other', 'requests', 'postgres']);
  const big = numberFlag(flags, 'pauses', 1_000_000);
  const small = numberFlag(flags, 'other', 100_000);
  const requests = numberFlag(flags, 'requests', 300);
  const postgres = flags.has('postgres');

  const { database, service, account } = await setUpService(
    `# bench:console — console pages with ${int(big)} and ${int(small)} pauses`,
    postgres,
  );
  const other = await register(service.url);
  const store = openBenchStore(database);
  const filled = await fill(store, account.developerId, big);
  const otherFilled = await fill(store, other.developerId, small);
  // Fresh statistics, as autovacuum would have them for tables this size.
  if (postgres) await sql`analyze`.execute(store.db);
  else
    console.log(`SQLite's worker indexed the titles ${(await titlesIndexed(store, 600)).toFixed(1)} s after the fill`);
  await store.close();
  console.log(
    `filled: ${int(big)} pauses in ${filled.seconds.toFixed(0)} s, ${int(small)} in ${otherFilled.seconds.toFixed(0)} s`,
  );

  const agent = new Agent({ connections: 1 });
  const assets = await Promise.all(
    ['/console/assets/console.css', '/console/assets/console.js'].map(async (path) => {
      const reply = await request(`${service.url}${path}`, { dispatcher: agent });
      return (await reply.body.arrayBuffer()).byteLength;
    }),
  );
  const assetBytes = assets.reduce((a, b) => a + b, 0);

  const results: Timed[] = [];
  for (const [owner, count] of [
    [account, big],
    [other, small],
  ] as const) {
    const who = `${int(count)} pauses`;
    const cookie = await signIn(service.url, owner);
    const get = async (path: string): Promise<{ ms: number; bytes: number }> => {
      const started = performance.now();
      const reply = await request(`${service.url}${path}`, { dispatcher: agent, headers: { cookie } });
      const body = await reply.body.arrayBuffer();
      const elapsed = performance.now() - started;
      if (reply.statusCode !== 200) throw new Error(`GET ${path} answered ${reply.statusCode}`);
      return { ms: elapsed, bytes: body.byteLength };
    };
    const sample = owner === account ? filled.sample : otherFilled.sample;
    const kinds: Array<[string, () => string]> = [
      ['list, first page', () => '/console/pauses'],
      ['list, a page further down', () => `/console/pauses?after=${pick(sample)}`],
      ['status filter', () => `/console/pauses?status=${pick(['pending', 'responded', 'timed_out', 'cancelled'])}`],
      ['search, 1 title in 10', () => `/console/pauses?q=${pick(VERBS).toLowerCase()}`],
      ['search, two words, 1 in 100', () => `/console/pauses?q=${pick(VERBS)}+${pick(OBJECTS)}`],
      ['search, 1 title in 1,000', () => `/console/pauses?q=${RARE_WORD}`],
      ['search, a prefix of 4 letters', () => `/console/pauses?q=${pick(OBJECTS).slice(0, 4)}`],
      ['search, no title', () => '/console/pauses?q=zebra'],
      ['search and status', () => `/console/pauses?q=${pick(VERBS)}&status=cancelled`],
      ['pause page', () => `/console/pauses/${pick(sample)}`],
    ];
    for (const [name, path] of kinds) {
      for (let i = 0; i < 30; i++) await get(path()); // warm-up
      const timed: Timed = { name: `${who}: ${name}`, latencies: [], bytes: 0 };
      for (let i = 0; i < requests; i++) {
        const { ms: elapsed, bytes } = await get(path());
        timed.latencies.push(elapsed);
        timed.bytes = Math.max(timed.bytes, bytes);
      }
      results.push(timed);
    }
    console.log(`measured the developer with ${who}`);
  }
  await agent.close();

  console.log(`\n${requests} requests per row, one at a time, after 30 of warm-up; ${database.kind}.`);
  console.log(
    table(
      ['page', 'p50', 'p99', 'max', 'HTML (largest)', 'HTML + CSS + JS'],
      results.map((r) => [
        r.name,
        ms(percentile(r.latencies, 50)),
        ms(percentile(r.latencies, 99)),
        ms(Math.max(...r.latencies)),
        `${(r.bytes / 1024).toFixed(1)} KB`,
        `${((r.bytes + assetBytes) / 1024).toFixed(1)} KB`,
      ]),
    ),
  );
  const worst = results.reduce((a, b) => (percentile(a.latencies, 99) >= percentile(b.latencies, 99) ? a : b));
  const heaviest = Math.max(...results.map((r) => r.bytes)) + assetBytes;
  const worstP99 = percentile(worst.latencies, 99);
  console.log(
    `RESULT console p99: worst ${ms(worstP99)} (${worst.name}); target < ${TARGET_P99_MS} ms on SQLite: ${postgres ? 'reported' : verdict(worstP99 < TARGET_P99_MS)}`,
  );
  console.log(
    `RESULT console weight: heaviest page ${(heaviest / 1024).toFixed(1)} KB with CSS and JS; target < 60 KB: ${verdict(heaviest < TARGET_PAGE_BYTES)}`,
  );
}

const pick = <T>(values: readonly T[]): T => values[randomInt(values.length)]!;
