import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../helpers/console.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

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
const pendingIn = (html: string) => Number(/id="pending-count"><strong>(\d+)<\/strong>/.exec(html)?.[1]);

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

  // Live is the default, and holds only the live pause.
  const livePage = await client.get('/console/pauses');
  expect(idsIn(livePage.text)).toEqual([live.id]);
  expect(pendingIn(livePage.text)).toBe(1);

  // A cursor or status that is not one is ignored, not an error.
  const odd = await client.get('/console/pauses?mode=test&status=nope&after=%3Cscript%3E');
  expect(odd.status).toBe(200);
  expect(idsIn(odd.text)).toEqual(newestFirst.slice(0, 25));
});
