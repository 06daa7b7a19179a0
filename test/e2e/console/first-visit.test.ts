import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What a new developer meets in the console over HTTP: the pauses page opens
// on the mode they last made a pause in, a page says a finished pause's
// outcome and its time (not when it would have expired), an unknown console
// address keeps the signed-in frame, and long links are shortened with the
// whole link behind a copy button.

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.destroy();
});

async function signedIn(): Promise<{ account: Account; client: ConsoleClient }> {
  const account = await registerAccount(service.url);
  const client = new ConsoleClient(service.url);
  await client.signIn(account.email, account.password);
  return { account, client };
}

const idsIn = (html: string) => [...html.matchAll(/href="\/console\/pauses\/(pause_[0-9a-z]+)/g)].map((m) => m[1]!);
const currentMode = (html: string) => /<a href="[^"]*" aria-current="page">(Live|Test)<\/a>/.exec(html)?.[1];

it('opens the pauses page on the mode of the newest pause, and the empty live page points to the test pauses', async () => {
  const { account, client } = await signedIn();
  // Nothing yet: live.
  expect(currentMode((await client.get('/console/pauses')).text)).toBe('Live');

  const made: string[] = [];
  for (let i = 0; i < 3; i++) made.push((await createPause(service.url, account.test, { title: `Try ${i}` })).id);
  const opened = await client.get('/console/pauses');
  expect(currentMode(opened.text)).toBe('Test');
  expect(idsIn(opened.text).sort()).toEqual([...made].sort());

  // The switch names its mode, so Live stays Live.
  expect(opened.text).toContain('href="/console/pauses?mode=live"');
  const live = await client.get('/console/pauses?mode=live');
  expect(currentMode(live.text)).toBe('Live');
  expect(idsIn(live.text)).toEqual([]);
  expect(live.text).toContain('No live pauses yet.');
  expect(live.text).toMatch(
    /3 test pauses are waiting: <a href="\/console\/pauses\?mode=test">see the test pauses<\/a>/,
  );

  // A live pause made after them: the console opens on live again.
  const real = await createPause(service.url, account.live, { title: 'For real' });
  const again = await client.get('/console/pauses');
  expect(currentMode(again.text)).toBe('Live');
  expect(idsIn(again.text)).toEqual([real.id]);
});

it('shows when a finished pause was answered, cancelled or expired instead of when it expires', async () => {
  const { account, client } = await signedIn();
  const open = await createPause(service.url, account.live, { title: 'Still open' });
  const openPage = await client.get(`/console/pauses/${open.id}`);
  expect(openPage.text).toContain('<dt>Expires</dt>');

  const cancelled = await createPause(service.url, account.live, { title: 'Withdrawn' });
  const after = (await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: account.live })).body;
  const cancelledPage = await client.get(`/console/pauses/${cancelled.id}`);
  expect(cancelledPage.text).not.toContain('<dt>Expires</dt>');
  expect(cancelledPage.text).toContain(`<dt>Cancelled</dt><dd><time datetime="${after.updated_at}"`);

  const answered = await createPause(service.url, account.live, { title: 'Ship it?', options: ['yes', 'no'] });
  const token = tokenOf(answered);
  expect((await call(service.url, 'POST', `/v1/respond/${token}`, { body: { choice: 'yes' } })).status).toBe(200);
  const response = (await call(service.url, 'GET', `/v1/pause/${answered.id}`, { token: account.live })).body.response;
  const answeredPage = await client.get(`/console/pauses/${answered.id}`);
  expect(answeredPage.text).not.toContain('<dt>Expires</dt>');
  expect(answeredPage.text).toContain(`<dt>Answered</dt><dd><time datetime="${response.response_at}"`);
});

it('keeps the signed-in frame on an unknown console address', async () => {
  const { account, client } = await signedIn();
  const page = await client.get('/console/nope');
  expect(page.status).toBe(404);
  expect(page.text).toContain(account.email);
  expect(page.text).toContain('Sign out');
  expect(page.text).not.toContain('Create an account');
  // Signed out: the signed-out menu.
  const anonymous = await new ConsoleClient(service.url).get('/console/nope');
  expect(anonymous.status).toBe(404);
  expect(anonymous.text).toContain('Create an account');
});

it('shortens long links on a pause page and keeps the whole link for the copy button', async () => {
  const { account, client } = await signedIn();
  const reviewer = `a.reviewer.with.a.rather.long.address.${Date.now()}@example.com`;
  const pause = await createPause(service.url, account.test, { title: 'Links', reviewers: [{ email: reviewer }] });
  const page = await client.get(`/console/pauses/${pause.id}?mode=test`);
  const link = pause.reviewers[0].response_url as string;
  expect(link.length).toBeGreaterThan(60);
  // The whole link is what the copy button copies; on screen it is one ellipsised line.
  expect(page.text).toContain(`<code class="short" data-copy="" data-copy-label="${reviewer}’s link" title="${link}">`);
});
