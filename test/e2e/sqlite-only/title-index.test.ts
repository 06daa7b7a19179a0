import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../../helpers/console.js';
import { type Account, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// SQLite's text index of titles is filled by the worker, from where it last
// stopped (pause_titles_progress). Should the rowids it went by change (a
// VACUUM may renumber them), it builds the index again from the start: every
// pause found once, none twice.

let service: TestService;
let account: Account;
let client: ConsoleClient;

beforeAll(async () => {
  service = await startTestService();
  account = await registerAccount(service.url);
  client = new ConsoleClient(service.url);
  await client.signIn(account.email, account.password);
});
afterAll(() => service?.destroy());

const found = async (q: string) =>
  [
    ...(await client.get(`/console/pauses?mode=test&q=${q}`)).text.matchAll(/href="\/console\/pauses\/(pause_\w+)/g),
  ].map((m) => m[1]);

it('indexes new titles within a moment, and starts over when the rowid it stopped at holds another pause', async () => {
  const made: string[] = [];
  for (const title of ['Ship the lighthouse?', 'Paint the lighthouse?', 'Close the lighthouse?']) {
    made.push((await createPause(service.url, account.test, { title })).id);
  }
  await eventually(async () => expect((await found('lighthouse')).sort()).toEqual([...made].sort()));

  // As after a VACUUM that renumbered the rows: the recorded rowid no longer holds the recorded pause.
  await sql`update pause_titles_progress set last_id = 'pause_not_this_one'`.execute(service.store.db);
  await eventually(async () => {
    const { rows } = await sql<{ last_id: string }>`select last_id from pause_titles_progress`.execute(
      service.store.db,
    );
    expect(rows[0]?.last_id).not.toBe('pause_not_this_one');
  });
  expect((await found('lighthouse')).sort()).toEqual([...made].sort());
  const { rows } = await sql<{ count: number }>`select count(*) as count from pause_title_words`.execute(
    service.store.db,
  );
  const { rows: pauses } = await sql<{ count: number }>`select count(*) as count from pauses`.execute(service.store.db);
  expect(rows[0]?.count).toBe(pauses[0]?.count);

  const later = await createPause(service.url, account.test, { title: 'Reopen the lighthouse?' });
  await eventually(async () => expect(await found('reopen')).toEqual([later.id]));
});
