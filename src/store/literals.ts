import { sql } from 'kysely';

/**
 * 'pending', written into the SQL text rather than bound. Every partial index
 * is on status = 'pending', and when a bound value decides whether a partial
 * index applies, SQLite re-prepares the statement each time that value is
 * bound again, which better-sqlite3 does on every run: 12–20 µs a query, more
 * for the bigger ones.
 */
export const PENDING = sql.lit<'pending'>('pending');
