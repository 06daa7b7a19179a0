import { sql } from 'kysely';
import { request } from 'undici';
import type { Store } from '../../src/store/store.js';
import type { Account } from './service.js';

/** Signs in through the console's form; returns the session cookie. */
export async function signIn(baseUrl: string, owner: Account): Promise<string> {
  const reply = await request(`${baseUrl}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: owner.email, password: owner.password }).toString(),
  });
  await reply.body.dump();
  const cookie = String(reply.headers['set-cookie'] ?? '').split(';')[0];
  if (reply.statusCode !== 303 || !cookie) throw new Error(`console sign-in answered ${reply.statusCode}`);
  return cookie;
}

/** Waits until the service's worker has put every title into SQLite's text index; returns the seconds waited. */
export async function indexed(store: Store): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await sql<{ behind: number }>`
      select (select max(rowid) from pauses) - last_rowid as behind from pause_titles_progress`.execute(store.db);
    if (rows[0]?.behind === 0) return (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
