import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  closeCleanPages,
  DESKTOP,
  launchBrowser,
  linesOf,
  lookAt,
  openWatchedPage,
  PHONE,
  type WatchedPage,
} from '../../helpers/browser.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { nextLink } from '../../helpers/inbox.js';
import { createPause } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// The reviewers' inbox in a real Chromium with a real SMTP server: a reviewer
// asks for a link, reads it from the email, signs in, answers two questions
// in place, sees their votes; a used link is refused; sign-out. Every page is
// checked by axe-core (no serious or critical violation) and photographed on
// a phone and a desktop into test-artifacts/.

let service: TestService;
let smtp: SmtpReceiver;
let browser: Browser;
let dev: Account;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  [service, browser] = await Promise.all([
    startTestService({ env: { SMTP_URL: smtp.url, EMAIL_FROM: 'approvals@example.com' } }),
    launchBrowser(),
  ]);
  dev = await registerAccount(service.url);
});

afterAll(async () => {
  await browser?.close();
  await service?.destroy();
  await smtp?.close();
});

// Only the service's own origin is contacted, and no script error or CSP
// violation shows (Chromium notes the deliberate 410 page of a used link).
afterEach(async () => {
  await closeCleanPages(opened.splice(0), new URL(service.url).origin, [410]);
});

/** axe on both sizes, a screenshot of each, and no sideways scrolling on the phone. */
const look = (page: Page, name: string) => lookAt(page, `inbox-${name}`);

const readPause = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: dev.live })).body;

it('signs in by an emailed link, answers two questions in place, shows the votes, and refuses the used link', async () => {
  const me = `reviewer.${Date.now()}@example.com`;
  const deploy = await createPause(service.url, dev.live, {
    title: 'Deploy v2.4.1 to production?',
    body: 'Changes: 14 commits, 2 database migrations.\nRollback: redeploy v2.4.0.',
    reviewers: [{ email: me, name: 'Me' }, { email: 'colleague@example.com' }],
    quorum: 2,
    allow_text: true,
    expires_in: 1800,
  });
  const refund = await createPause(service.url, dev.live, {
    title: 'Refund order #1042 (€249)?',
    options: ['approve', 'reject'],
    reviewers: [{ email: me }],
    expires_in: 7200,
  });

  const watched = await openWatchedPage(browser, { viewport: DESKTOP });
  opened.push(watched);
  const { page } = watched;

  await page.goto(`${service.url}/inbox`);
  await expect.poll(() => page.url()).toBe(`${service.url}/inbox/sign-in`);
  await look(page, 'sign-in');
  await page.getByLabel('Your email address').fill(me);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your email' }).waitFor();
  await look(page, 'link-sent');

  const link = await nextLink(smtp, me);
  await page.goto(link);
  await page.getByRole('heading', { name: 'Sign in to your inbox' }).waitFor();
  await look(page, 'confirm');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your inbox' }).waitFor();
  expect(page.url()).toBe(`${service.url}/inbox`);
  // Soonest deadline first.
  expect(await page.locator('article h3').allTextContents()).toEqual([
    'Deploy v2.4.1 to production?',
    'Refund order #1042 (€249)?',
  ]);
  // Who asked each question, and when.
  expect(await page.locator('article .asked').first().textContent()).toMatch(
    new RegExp(`^Asked by ${dev.email.replace(/[.+]/g, '\\$&')} · `),
  );
  await look(page, 'inbox');

  // The first question: a comment and a vote, in place.
  const first = page.locator('article', { has: page.getByRole('heading', { name: 'Deploy v2.4.1 to production?' }) });
  await first.getByLabel('Comment').fill('Migrations checked.');
  await first.getByRole('button', { name: 'approve' }).click();
  await page.getByText(/Your vote “.+” on “.+” has been recorded/).waitFor();
  expect(await page.locator('article h3').allTextContents()).toEqual(['Refund order #1042 (€249)?']);

  // The second, with the keyboard: its first option button, then Enter.
  await page.getByRole('button', { name: 'reject' }).focus();
  await page.keyboard.press('Enter');
  await page.getByText('Nothing is waiting for your vote.').waitFor();
  const rows = page.locator('table tbody tr');
  await expect.poll(() => rows.count()).toBe(2);
  expect(await rows.nth(0).locator('th').textContent()).toMatch(/^Refund order #1042 \(€249\)\?Asked by dev/);
  expect(await rows.nth(0).locator('td').last().textContent()).toBe('Decided: reject');
  expect(await rows.nth(1).locator('td').last().textContent()).toBe('Waiting for the other reviewers');
  await look(page, 'history');
  // On a phone each vote is a block of lines in its card; each time (in the reader's zone) stays on one line.
  await page.setViewportSize(PHONE);
  const times = page.locator('table.votes time');
  expect(await times.count()).toBe(4);
  for (const time of await times.all()) {
    expect(await time.textContent()).not.toContain('UTC');
    expect(await linesOf(time)).toHaveLength(1);
  }
  await page.setViewportSize(DESKTOP);

  const deployRead = await readPause(deploy.id);
  expect(deployRead.reviewers[0].vote).toMatchObject({ choice: 'approve', text: 'Migrations checked.' });
  expect((await readPause(refund.id)).status).toBe('responded');

  // The link is used: opening it again is refused, in a fresh browser too.
  const other = await openWatchedPage(browser, { viewport: DESKTOP });
  opened.push(other);
  const refused = await other.page.goto(link);
  expect(refused?.status()).toBe(410);
  await other.page.getByRole('heading', { name: 'This link does not work any more' }).waitFor();
  await look(other.page, 'link-used');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  await page.goto(`${service.url}/inbox`);
  await expect.poll(() => page.url()).toBe(`${service.url}/inbox/sign-in`);
}, 120_000);
