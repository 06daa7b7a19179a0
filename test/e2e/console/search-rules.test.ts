import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../../helpers/console.js';
import { type Account, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The rules that bound what a title search may cost, as the console shows
// them: a search that breaks one is refused with a 4xx whose page says which
// rule, in words, where the results would be.

let service: TestService;
let account: Account;
let client: ConsoleClient;

beforeAll(async () => {
  service = await startTestService({ env: { SEARCH_RATE_LIMIT: '40/60' } });
  account = await registerAccount(service.url);
  client = new ConsoleClient(service.url);
  await client.signIn(account.email, account.password);
});
afterAll(() => service?.destroy());

const idsIn = (html: string) => [...html.matchAll(/href="\/console\/pauses\/(pause_[0-9a-z]+)/g)].map((m) => m[1]!);
const alertIn = (html: string) => /<div class="card empty" role="alert"><p>([^<]*)<\/p>/.exec(html)?.[1];

it('refuses a one-letter word and more than four words, saying which rule, and finds whole words past four letters', async () => {
  const deploy = (await createPause(service.url, account.test, { title: 'Deploy to prod' })).id;
  const deployment = (await createPause(service.url, account.test, { title: 'Deployment of the API' })).id;
  await eventually(async () =>
    expect(idsIn((await client.get('/console/pauses?mode=test&q=of+api')).text)).toEqual([deployment]),
  );

  const short = await client.get('/console/pauses?mode=test&q=deploy+a');
  expect(short.status).toBe(400);
  expect(alertIn(short.text)).toBe('Each word searched for needs at least 2 letters or digits (“a” is too short).');
  expect(short.text).toContain('value="deploy a"'); // the box keeps what was typed, to correct it
  expect(idsIn(short.text)).toEqual([]);

  const many = await client.get('/console/pauses?mode=test&q=one+two+three+four+five');
  expect(many.status).toBe(400);
  expect(alertIn(many.text)).toBe('Search for at most 4 words at once (this search has 5).');

  // Four words of two letters are fine; a word longer than four letters must start a word whole.
  expect((await client.get('/console/pauses?mode=test&q=de+to+pr+de')).status).toBe(200);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=de+to+pr')).text)).toEqual([deploy]);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=deployment')).text)).toEqual([deployment]);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=deploy')).text)).toEqual([deployment, deploy]);
  expect(idsIn((await client.get('/console/pauses?mode=test&q=deplx')).text)).toEqual([]);
});

it('limits the searches of one console session, and says so, while other sessions and the list go on', async () => {
  const limited = await startTestService({ env: { SEARCH_RATE_LIMIT: '3/60' } });
  try {
    const owner = await registerAccount(limited.url);
    const first = new ConsoleClient(limited.url);
    await first.signIn(owner.email, owner.password);
    for (let i = 0; i < 3; i++) expect((await first.get('/console/pauses?q=deploy')).status).toBe(200);
    const refused = await first.get('/console/pauses?q=deploy');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(alertIn(refused.text)).toMatch(
      /^Too many searches: at most 3 every 60 s per console session; try again in \d+ s\.$/,
    );
    // The list without a search is not a search.
    expect((await first.get('/console/pauses')).status).toBe(200);

    const second = new ConsoleClient(limited.url);
    await second.signIn(owner.email, owner.password);
    expect((await second.get('/console/pauses?q=deploy')).status).toBe(200);
  } finally {
    await limited.destroy();
  }
});
