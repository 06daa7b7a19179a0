import { afterAll, beforeAll, expect, it } from 'vitest';
import { newIds } from '../../../src/domain/ids.js';
import { MATCHES_PER_PAGE_WITH_STATUS } from '../../../src/store/pause-search.js';
import { ConsoleClient } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The console's list of pauses over HTTP: live or test, newest first, pages
// of 25 with the API's cursor, a status filter, and the pending count; each
// the same as the API says.

let service: TestService;
let alice: Account;
let client: ConsoleClient;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
  client = new ConsoleClient(service.url);
  await client.signIn(alice.email, alice.password);
});

afterAll(async () => {
  await service?.destroy();
});

/** The pause ids a list page links to, in order. */
const idsIn = (html: string) => [...html.matchAll(/href="\/console\/pauses\/(pause_[0-9a-z]+)/g)].map((m) => m[1]!);
const olderLink = (html: string) => /href="(\/console\/pauses\?[^"]*after=[^"]+)" rel="next"/.exec(html)?.[1];
const pendingIn = (html: string) => Number(/id="pending-count"[^>]*><strong>(\d+)<\/strong>/.exec(html)?.[1]);

it('pages through test pauses newest first, filters by status, and counts the pending ones', async () => {
  const created: string[] = [];
  for (let i = 0; i < 27; i++) created.push((await createPause(service.url, alice.test, { title: `Test ${i}` })).id);
  const live = await createPause(service.url, alice.live, { title: 'The live one' });
  const cancelled = created[3]!;
  expect((await call(service.url, 'DELETE', `/v1/pause/${cancelled}`, { token: alice.test })).status).toBe(200);
  // Newest first is by id, as the API orders them (two made in the same millisecond are in id order).
  const newestFirst = [...created].sort().reverse();

  const first = await client.get('/console/pauses?mode=test');
  expect(first.status).toBe(200);
  expect(idsIn(first.text)).toEqual(newestFirst.slice(0, 25));
  expect(pendingIn(first.text)).toBe(26);
  const older = olderLink(first.text)!.replaceAll('&amp;', '&');
  expect(older).toBe(`/console/pauses?mode=test&after=${newestFirst[24]}`);

  const second = await client.get(older);
  expect(idsIn(second.text)).toEqual(newestFirst.slice(25));
  expect(olderLink(second.text)).toBeUndefined();
  expect(second.text).toContain('href="/console/pauses?mode=test">Newest</a>');

  const onlyCancelled = await client.get('/console/pauses?mode=test&status=cancelled');
  expect(idsIn(onlyCancelled.text)).toEqual([cancelled]);
  expect(onlyCancelled.text).toContain('<option value="cancelled" selected="">');

  // The API's list agrees.
  const api = await call(service.url, 'GET', '/v1/pause?limit=25', { token: alice.test });
  expect(api.body.data.map((p: { id: string }) => p.id)).toEqual(newestFirst.slice(0, 25));

  // The count alone, as the page's script reads it again; only with a session.
  const count = await client.get('/console/pauses/pending?mode=test');
  expect(count.status).toBe(200);
  expect(JSON.parse(count.text)).toEqual({ pending: 26 });
  expect(count.headers.get('cache-control')).toBe('no-store');
  const stranger = await new ConsoleClient(service.url).get('/console/pauses/pending?mode=test');
  expect(stranger.status).toBe(303);
  expect(stranger.location).toBe('/console/sign-in');

  // Live is the default, and holds only the live pause.
  const livePage = await client.get('/console/pauses');
  expect(idsIn(livePage.text)).toEqual([live.id]);
  expect(pendingIn(livePage.text)).toBe(1);

  // A cursor or status that is not one is ignored, not an error.
  const odd = await client.get('/console/pauses?mode=test&status=nope&after=%3Cscript%3E');
  expect(odd.status).toBe(200);
  expect(idsIn(odd.text)).toEqual(newestFirst.slice(0, 25));
});

/** Waits until a search finds the pause: SQLite's worker indexes new titles a moment after they are created. */
async function searchable(client: ConsoleClient, q: string, id: string): Promise<void> {
  await eventually(async () =>
    expect(idsIn((await client.get(`/console/pauses?mode=test&q=${q}`)).text)).toContain(id),
  );
}

const nextLink = (html: string) =>
  /href="(\/console\/pauses\?[^"]*cursor=[^"]+)" rel="next"/.exec(html)?.[1]?.replaceAll('&amp;', '&');

it('searches titles by the start of each word, newest first, in pages, only among the owner’s pauses of the mode', async () => {
  const bob = await registerAccount(service.url);
  const made = async (key: string, title: string) => {
    const pause = await createPause(service.url, key, { title });
    await sleep(2); // one per millisecond at least, so newest first is plain
    return pause.id as string;
  };
  const deploys: string[] = [];
  for (let i = 0; i < 27; i++) deploys.push(await made(alice.test, `Deploy build ${i} to PRODUCTION?`));
  await made(alice.live, 'Deploy the live one'); // other mode
  await made(bob.test, 'Deploy for Bob'); // other developer
  const refund = await made(alice.test, 'Refund order 42 for Zoë');
  const cafe = await made(alice.test, 'Déploiement du café'); // the last made: once it is found, all are indexed
  const newestDeploys = [...deploys].reverse();
  await searchable(client, 'caf%C3%A9', cafe);

  // Prefixes, any case; every word must match.
  const first = await client.get('/console/pauses?mode=test&q=depl+PROD');
  expect(first.status).toBe(200);
  expect(idsIn(first.text)).toEqual(newestDeploys.slice(0, 25));
  expect(first.text).toContain('value="depl PROD"');
  const second = await client.get(nextLink(first.text)!);
  expect(idsIn(second.text)).toEqual(newestDeploys.slice(25));
  expect(nextLink(second.text)).toBeUndefined();

  expect(idsIn((await client.get('/console/pauses?mode=test&q=refund+42')).text)).toEqual([refund]);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=zoe')).text)).toEqual(
    service.store.dialect === 'sqlite' ? [refund] : [], // PostgreSQL's 'simple' words keep their accents
  );
  expect(idsIn((await client.get('/console/pauses?mode=test&q=caf%C3%A9')).text)).toEqual([cafe]);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=refund+43')).text)).toEqual([]);

  // With a status: the cancelled deploy only.
  expect((await call(service.url, 'DELETE', `/v1/pause/${deploys[5]}`, { token: alice.test })).status).toBe(200);
  const cancelled = await client.get('/console/pauses?mode=test&q=deploy&status=cancelled');
  expect(idsIn(cancelled.text)).toEqual([deploys[5]]);

  // Live mode and Bob's pauses are never found from here.
  expect(idsIn((await client.get('/console/pauses?mode=live&q=deploy')).text)).toHaveLength(1);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=bob')).text)).toEqual([]);

  // Text without a word finds nothing and is shown escaped; a bad cursor starts over.
  const odd = await client.get('/console/pauses?mode=test&q=%3Cscript%3E%22%2A');
  expect(odd.status).toBe(200);
  expect(odd.text).not.toContain('<script>"');
  expect(odd.text).toContain('&lt;script&gt;');
  expect(idsIn((await client.get('/console/pauses?mode=test&q=%22%2A%28')).text)).toEqual([]);
  const restarted = await client.get('/console/pauses?mode=test&q=deploy&cursor=%27%3B--');
  expect(idsIn(restarted.text)).toEqual(newestDeploys.slice(0, 25));
});

it('pages a search with a status through at most 1,000 matches at a time on SQLite, and never misses one', async () => {
  const carol = await registerAccount(service.url);
  const template = await service.store.db
    .selectFrom('pauses')
    .selectAll()
    .where('id', '=', (await createPause(service.url, carol.test, { title: 'Release 0' })).id)
    .executeTakeFirstOrThrow();
  // More than a page looks at, oldest first; only the sixth oldest is cancelled.
  const ids = newIds('pause', MATCHES_PER_PAGE_WITH_STATUS + 100);
  for (let start = 0; start < ids.length; start += 300) {
    const rows = ids.slice(start, start + 300).map((id, i) => ({
      ...template,
      id,
      title: `Release ${start + i + 1}`,
      status: start + i === 5 ? ('cancelled' as const) : ('responded' as const),
    }));
    await service.store.db.insertInto('pauses').values(rows).execute();
  }
  const carolClient = new ConsoleClient(service.url);
  await carolClient.signIn(carol.email, carol.password);
  await searchable(carolClient, 'release', ids[ids.length - 1]!);

  // A word of at most four letters, which SQLite's index answers whole (a longer one looks at fewer matches a page).
  const first = await carolClient.get('/console/pauses?mode=test&q=rele&status=cancelled');
  if (service.store.dialect === 'postgres') {
    expect(idsIn(first.text)).toEqual([ids[5]]);
    expect(nextLink(first.text)).toBeUndefined();
    return;
  }
  // The newest 1,000 matches hold none: an empty page that says so, and goes on.
  expect(idsIn(first.text)).toEqual([]);
  expect(first.text).toContain('None of the newest pauses whose titles match has this status');
  const second = await carolClient.get(nextLink(first.text)!);
  expect(idsIn(second.text)).toEqual([ids[5]]);
  expect(nextLink(second.text)).toBeUndefined();
});
