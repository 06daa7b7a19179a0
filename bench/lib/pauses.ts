// Filling the database with pauses: through the API (autocannon, fixed
// count), or straight into the tables with the row shape of the create action
// (src/actions/create-pause.ts buildRow), through the project's own store.
import { randomBytes } from 'node:crypto';
import { DEFAULT_OPTIONS } from '../../src/domain/pause.js';
import { WITHOUT_REVIEWERS } from '../../src/store/pauses.js';
import type { PausesTable } from '../../src/store/schema.js';
import { openStore, type Store } from '../../src/store/store.js';
import { runLoad } from './load.js';
import type { BenchDatabase } from './service.js';

/** The project's store over the benchmark database, from the benchmark process. */
export function openBenchStore(database: BenchDatabase): Store {
  if (database.kind === 'sqlite') return openStore({ kind: 'sqlite', path: database.url.slice('sqlite:'.length) });
  return openStore({ kind: 'postgres', url: database.url });
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A pause id as src/domain/ids.ts makes them (10 base32 characters of
 * milliseconds, 16 random), from one randomBytes call per batch for speed.
 */
export function pauseIds(count: number, now: number): string[] {
  let time = '';
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = ALPHABET[rest % 32] + time;
  const bytes = randomBytes(count * 16);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    let random = '';
    for (let i = 0; i < 16; i++) random += ALPHABET[bytes[n * 16 + i]! % 32];
    ids.push(`pause_${time}${random}`);
  }
  return ids;
}

export interface PendingPauseInput {
  developerId: string;
  mode: 'live' | 'test';
  expiresAt: string;
  title: string;
}

/** The row the create route stores for {title, expires_at}, pending. */
export function pendingPauseRow(input: PendingPauseInput, id: string, createdAt: string): PausesTable {
  return {
    id,
    developer_id: input.developerId,
    mode: input.mode,
    status: 'pending',
    title: input.title,
    body: null,
    options: JSON.stringify(DEFAULT_OPTIONS),
    allow_text: 0,
    expires_at: input.expiresAt,
    timeout_default: null,
    metadata: '{}',
    notify: null,
    response_choice: null,
    response_text: null,
    response_at: null,
    created_at: createdAt,
    updated_at: createdAt,
    ...WITHOUT_REVIEWERS,
  };
}

/**
 * Inserts `count` pending pauses owned by the developer in transactions of
 * `batch` rows, as the create route would have stored them for
 * {title, expires_at}. Returns how long it took, and with `keepIds` the ids.
 */
export async function insertPausesDirectly(
  store: Store,
  input: PendingPauseInput & { count: number; keepIds?: boolean },
  batch = 500,
): Promise<{ seconds: number; ids: string[] }> {
  const started = performance.now();
  const kept: string[] = [];
  for (let done = 0; done < input.count; done += batch) {
    const size = Math.min(batch, input.count - done);
    const now = new Date();
    const createdAt = now.toISOString();
    const ids = pauseIds(size, now.getTime());
    if (input.keepIds) kept.push(...ids);
    const rows = ids.map((id) => pendingPauseRow(input, id, createdAt));
    await store.db.transaction().execute((trx) => trx.insertInto('pauses').values(rows).execute());
  }
  return { seconds: (performance.now() - started) / 1000, ids: kept };
}

/** Creates exactly `count` pauses through POST /v1/pause, `connections` at a time. */
export async function createPausesThroughApi(input: {
  baseUrl: string;
  key: string;
  count: number;
  body: object;
  connections?: number;
  title: string;
}) {
  return runLoad({
    title: input.title,
    url: `${input.baseUrl}/v1/pause`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${input.key}` },
    body: JSON.stringify(input.body),
    connections: input.connections ?? 10,
    amount: input.count,
  });
}
