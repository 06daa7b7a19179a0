import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../../helpers/console.js';
import { registerAccount } from '../../helpers/http.js';
import { eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// On PostgreSQL a slow title search holds a pooled connection while it runs:
// an instance runs at most SEARCH_CONCURRENCY searches at once and refuses
// more, and each search's statements run at most SEARCH_TIMEOUT_MS. Searches
// are held here by a lock on the pauses table, not by timing: a search then
// waits until the lock goes, or its statement timeout ends it. The pages name
// their mode: without one, the page first reads which mode was last used, and
// that read would wait on the lock before any search starts.

const alertIn = (html: string) => /<div class="card empty" role="alert"><p>([^<]*)<\/p>/.exec(html)?.[1];

/** A connection of its own that holds an exclusive lock on pauses until release(). */
async function lockPauses(databaseUrl: string) {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query('begin');
  await holder.query('lock table pauses in access exclusive mode');
  return {
    /** The statements of this database waiting for the lock. */
    waiting: async () => {
      await holder.query('select pg_stat_clear_snapshot()'); // else the transaction sees its first look again
      return (
        await holder.query<{ query: string }>(
          `select query from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        )
      ).rows.map((row) => row.query);
    },
    release: async () => {
      await holder.query('rollback');
      await holder.end();
    },
  };
}

const isSearch = (query: string) => query.includes('to_tsquery');
/** The console page's pending count, which every pauses page reads besides its search. */
const isPendingCount = (query: string) => query.startsWith('select count(*)');

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { SEARCH_CONCURRENCY: '1', SEARCH_TIMEOUT_MS: '60000' } });
});
afterAll(() => service?.destroy());

it('runs at most SEARCH_CONCURRENCY searches at once and refuses one more with a 429 that says so', async () => {
  const account = await registerAccount(service.url);
  const client = new ConsoleClient(service.url);
  await client.signIn(account.email, account.password);
  const lock = await lockPauses(service.databaseUrl);
  let held: Promise<{ status: number }>;
  let refused: Promise<{ status: number; text: string; headers: Headers }>;
  try {
    held = client.get('/console/pauses?mode=live&q=deploy');
    await eventually(async () => expect((await lock.waiting()).filter(isSearch)).toHaveLength(1));
    refused = client.get('/console/pauses?mode=live&q=refund');
    // The second page waits for its pending count (the lock holds that too), never for a search of its own.
    await eventually(async () => expect((await lock.waiting()).filter(isPendingCount)).toHaveLength(2));
    expect((await lock.waiting()).filter(isSearch)).toHaveLength(1);
  } finally {
    await lock.release();
  }
  expect((await held).status).toBe(200);
  const second = await refused;
  expect(second.status).toBe(429);
  expect(second.headers.get('retry-after')).toBe('1');
  expect(alertIn(second.text)).toBe(
    'Too many searches at once: this server runs at most 1 at a time; try again in a moment.',
  );
  // The slot is free again.
  expect((await client.get('/console/pauses?mode=live&q=refund')).status).toBe(200);
});

it('ends a search that runs past SEARCH_TIMEOUT_MS with a 503 that says so, and frees its connection', async () => {
  const quick = await startTestService({ env: { SEARCH_TIMEOUT_MS: '50' } });
  try {
    const account = await registerAccount(quick.url);
    const client = new ConsoleClient(quick.url);
    await client.signIn(account.email, account.password);
    const lock = await lockPauses(quick.databaseUrl);
    let timedOut: Promise<{ status: number; text: string }>;
    try {
      timedOut = client.get('/console/pauses?mode=live&q=deploy');
      // The search waits for the lock until its statement timeout cancels it; the page's pending count still waits.
      await eventually(async () => expect((await lock.waiting()).filter(isPendingCount)).toHaveLength(1));
      await eventually(async () => expect((await lock.waiting()).filter(isSearch)).toHaveLength(0));
    } finally {
      await lock.release();
    }
    const page = await timedOut;
    expect(page.status).toBe(503);
    expect(alertIn(page.text)).toBe(
      'The search took longer than the 50 ms a search may run; try longer or more words.',
    );
    // The timeout was the search's own: the connection goes back without it.
    const [setting] = await quick.store.db
      .selectNoFrom((eb) => eb.fn<string>('current_setting', [eb.val('statement_timeout')]).as('timeout'))
      .execute();
    expect(setting?.timeout).toBe('0');
    expect((await client.get('/console/pauses?mode=live&q=deploy')).status).toBe(200);
  } finally {
    await quick.destroy();
  }
});
