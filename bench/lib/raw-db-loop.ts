// The "raw driver" baseline for bench/api-throughput.ts, run as its own
// process (node --import tsx bench/lib/raw-db-loop.ts '<json>'), as the
// service is: the database work of each operation with the plain driver and
// nothing else (no HTTP, no Kysely, no auth). Per operation, for `seconds` or
// `maxRows` rows, whichever comes first:
//   create   one INSERT of the create route's row, its own transaction;
//   respond  BEGIN; UPDATE … WHERE status = 'pending' RETURNING *; INSERT the
//            event; COMMIT, over the rows `create` inserted;
//   get      SELECT * by primary key, over the same rows.
// SQLite: better-sqlite3 with the service's pragmas and prepared statements,
// one loop (the driver is synchronous). PostgreSQL: pg, `concurrency` lanes
// over a pool of as many connections. Prints one line of JSON: RawLoopResult.
import Database from 'better-sqlite3';
import pg from 'pg';
import { eventPayload } from '../../src/domain/events.js';
import { newId } from '../../src/domain/ids.js';
import type { PausesTable } from '../../src/store/schema.js';
import { type PendingPauseInput, pauseIds, pendingPauseRow } from './pauses.js';

export type RawOperation = 'create' | 'respond' | 'get';

export interface RawLoopInput {
  database: { kind: 'sqlite' | 'postgres'; url: string };
  pause: PendingPauseInput;
  concurrency: number;
  seconds: number;
  maxRows: number;
  operations: RawOperation[];
}

export interface RawLoopResult {
  operation: RawOperation;
  rows: number;
  /** Wall seconds of the timed loop. */
  seconds: number;
  /** CPU seconds (user + system) this process used in it. */
  cpuSeconds: number;
}

/** What one operation does to one row, given that row's pause id. */
interface Driver {
  create(row: PausesTable): Promise<void> | void;
  respond(id: string, now: string): Promise<void> | void;
  get(id: string): Promise<void> | void;
  close(): Promise<void> | void;
}

const COLUMNS = Object.keys(pendingPauseRow({ developerId: '', mode: 'test', expiresAt: '', title: '' }, '', ''));
const EVENT_COLUMNS = ['id', 'pause_id', 'developer_id', 'mode', 'type', 'payload', 'created_at'];
const RESPOND_SET =
  "status = 'responded', response_choice = 'approve', response_text = null, response_at = $1, updated_at = $1";

function eventValues(pause: PausesTable, now: string): unknown[] {
  const id = newId('evt');
  const payload = eventPayload(
    'pause.responded',
    {
      id: pause.id,
      developerId: pause.developer_id,
      metadata: JSON.parse(pause.metadata),
      responseChoice: pause.response_choice,
      responseText: pause.response_text,
      responseAt: pause.response_at,
      responseValues: null,
      responseEdited: null,
      expiresAt: pause.expires_at,
    },
    now,
  );
  return [id, pause.id, pause.developer_id, pause.mode, 'pause.responded', payload, now];
}

const placeholders = (count: number, style: 'sqlite' | 'postgres') =>
  Array.from({ length: count }, (_, i) => (style === 'sqlite' ? '?' : `$${i + 1}`)).join(', ');

function sqliteDriver(path: string): Driver {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  const insert = db.prepare(
    `insert into pauses (${COLUMNS.join(', ')}) values (${placeholders(COLUMNS.length, 'sqlite')})`,
  );
  const update = db.prepare(
    `update pauses set ${RESPOND_SET.replaceAll('$1', '@now')} where id = @id and status = 'pending' and expires_at > @now returning *`,
  );
  const event = db.prepare(
    `insert into events (${EVENT_COLUMNS.join(', ')}) values (${placeholders(EVENT_COLUMNS.length, 'sqlite')})`,
  );
  const select = db.prepare('select * from pauses where id = ?');
  const respond = db.transaction((id: string, now: string) => {
    const pause = update.get({ id, now }) as PausesTable | undefined;
    if (!pause) throw new Error(`pause ${id} was not pending`);
    event.run(eventValues(pause, now));
  });
  return {
    create: (row) => void insert.run(Object.values(row)),
    respond: (id, now) => respond(id, now),
    get: (id) => {
      if (!select.get(id)) throw new Error(`pause ${id} not found`);
    },
    close: () => {
      db.close();
    },
  };
}

function postgresDriver(url: string, concurrency: number): Driver {
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  const insert = `insert into pauses (${COLUMNS.join(', ')}) values (${placeholders(COLUMNS.length, 'postgres')})`;
  const update = `update pauses set ${RESPOND_SET} where id = $2 and status = 'pending' and expires_at > $1 returning *`;
  const event = `insert into events (${EVENT_COLUMNS.join(', ')}) values (${placeholders(EVENT_COLUMNS.length, 'postgres')})`;
  return {
    create: async (row) => void (await pool.query(insert, Object.values(row))),
    respond: async (id, now) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const { rows } = await client.query<PausesTable>(update, [now, id]);
        if (!rows[0]) throw new Error(`pause ${id} was not pending`);
        await client.query(event, eventValues(rows[0], now));
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw error;
      } finally {
        client.release();
      }
    },
    get: async (id) => {
      const { rows } = await pool.query('select * from pauses where id = $1', [id]);
      if (!rows[0]) throw new Error(`pause ${id} not found`);
    },
    close: () => pool.end(),
  };
}

/**
 * Runs `step` for rows 0, 1, 2… in `lanes` concurrent lanes until `limit`
 * rows or `seconds` have passed. Returns how many ran and the wall seconds.
 */
async function timed(
  lanes: number,
  seconds: number,
  limit: number,
  step: (n: number) => Promise<void> | void,
): Promise<{ rows: number; seconds: number }> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let next = 0;
  const lane = async () => {
    while (next < limit && performance.now() < deadline) await step(next++);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { rows: next, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '') as RawLoopInput;
  const sqlite = input.database.kind === 'sqlite';
  const driver = sqlite
    ? sqliteDriver(input.database.url.slice('sqlite:'.length))
    : postgresDriver(input.database.url, input.concurrency);
  const lanes = sqlite ? 1 : input.concurrency;
  const ids: string[] = [];
  const results: RawLoopResult[] = [];
  try {
    for (const operation of input.operations) {
      const limit = operation === 'create' ? input.maxRows : ids.length;
      if (limit === 0) throw new Error(`${operation} needs the rows of create; list create first`);
      const cpuBefore = process.cpuUsage();
      const run = await timed(lanes, input.seconds, limit, (n) => {
        if (operation === 'get') return driver.get(ids[n]!);
        const now = new Date().toISOString();
        if (operation === 'respond') return driver.respond(ids[n]!, now);
        // One id at a time, as the service makes them; randomBytes of 16 is cheap next to the insert.
        const id = pauseIds(1, Date.now())[0]!;
        ids.push(id);
        return driver.create(pendingPauseRow(input.pause, id, now));
      });
      const cpu = process.cpuUsage(cpuBefore);
      results.push({ operation, ...run, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
    }
  } finally {
    await driver.close();
  }
  console.log(JSON.stringify(results));
}

await main();
