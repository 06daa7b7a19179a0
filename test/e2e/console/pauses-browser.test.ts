import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  DESKTOP,
  launchBrowser,
  lookAtConsolePage as look,
  openWatchedPage,
  PHONE,
  type WatchedPage,
} from '../../helpers/browser.js';
import { call } from '../../helpers/http.js';
import { createPause } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';
import { castVote } from '../../helpers/votes.js';

// The console in a real Chromium: a developer signs up, signs out, signs in
// with the keyboard only, sees a pause created by the API, opens it, reads
// its timeline, cancels it and signs out. Every page is checked by axe-core
// (no serious or critical violation) and photographed on a phone and a
// desktop into test-artifacts/.

let service: TestService;
let smtp: SmtpReceiver;
let browser: Browser;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  [service, browser] = await Promise.all([
    startTestService({ env: { SMTP_URL: smtp.url, EMAIL_FROM: 'approvals@example.com' } }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await service?.destroy();
  await smtp?.close();
});

// Nothing but the service's own origin is contacted, and no script error or
// CSP violation shows in the console (Chromium notes a non-2xx document, e.g.
// the 201 after sign-up is fine, a 4xx page would be listed).
afterEach(async () => {
  const origin = new URL(service.url).origin;
  for (const watched of opened.splice(0)) {
    for (const request of watched.requests) expect(new URL(request.split(' ')[1] ?? '').origin, request).toBe(origin);
    expect(watched.errors).toEqual([]);
    await watched.close();
  }
});

it('signs up, signs in, finds and cancels a pause, and signs out', async () => {
  const watched = await openWatchedPage(browser, { viewport: DESKTOP });
  opened.push(watched);
  const { page } = watched;
  const email = `console.${Date.now()}@example.com`;
  const password = 'a long enough password';

  await page.goto(`${service.url}/console`);
  await expect.poll(() => page.url()).toBe(`${service.url}/console/sign-in`);
  await look(page, 'sign-in');

  await page.getByRole('link', { name: 'Create one' }).click();
  await look(page, 'sign-up');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create the account' }).click();
  await page.getByRole('heading', { name: 'Your API keys' }).waitFor();
  const live = (await page.locator('code[data-copy-label="the live key"]').textContent())!;
  expect(live).toMatch(/^svc_live_[0-9a-f]{48}$/);
  // The script added copy buttons: it runs under the CSP.
  await expect.poll(() => page.getByRole('button', { name: 'Copy the live key' }).count()).toBe(1);
  await look(page, 'keys');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();

  // Signing in with the keyboard only.
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.id === 'email')) break;
  }
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Pauses' }).waitFor();
  await page.getByText('No live pauses yet.').waitFor();

  // Pauses created by the API: a plain one, and one with reviewers and a vote.
  const deploy = await createPause(service.url, live, {
    title: 'Deploy v2.4.1 to production?',
    body: 'Changes: 14 commits, 2 database migrations.\nRollback: redeploy v2.4.0.',
    options: ['approve', 'reject'],
    allow_text: true,
    expires_in: 5400,
  });
  const refund = await createPause(service.url, live, {
    title: 'Refund order #1042 (€249)?',
    options: ['approve', 'reject'],
    reviewers: [{ email: 'ann@example.com', name: 'Ann' }, { email: 'bob@example.com' }],
    quorum: 2,
  });
  expect((await castVote(service.url, refund.reviewers[0], 'approve')).reply.status).toBe(200);
  await page.reload();
  await expect.poll(() => page.locator('#pending-count strong').textContent()).toBe('2');
  await look(page, 'pauses');

  // The pending count follows without a reload when the page comes back to view.
  const third = await createPause(service.url, live, { title: 'Rotate the signing key?' });
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await expect.poll(() => page.locator('#pending-count strong').textContent()).toBe('3');
  expect((await call(service.url, 'DELETE', `/v1/pause/${third.id}`, { token: live })).status).toBe(200);
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await expect.poll(() => page.locator('#pending-count strong').textContent()).toBe('2');

  await page.getByRole('link', { name: 'Refund order #1042 (€249)?' }).click();
  await page.getByRole('heading', { name: 'Reviewers and votes' }).waitFor();
  await page.getByText('ann@example.com voted “approve”').waitFor();
  await look(page, 'pause-reviewers');

  await page.goto(`${service.url}/console/pauses`);
  await page.getByRole('link', { name: 'Deploy v2.4.1 to production?' }).click();
  await page.getByRole('heading', { name: 'Timeline' }).waitFor();
  await expect.poll(() => page.locator('ol.timeline .what').allTextContents()).toEqual(['Created']);
  await look(page, 'pause');

  await page.getByRole('link', { name: 'Cancel this pause…' }).click();
  await look(page, 'cancel');
  await page.getByRole('button', { name: 'Cancel the pause' }).click();
  await page.getByText('The pause is cancelled.').waitFor();
  await expect
    .poll(() => page.locator('ol.timeline .what').allTextContents())
    .toEqual(['Created', 'Cancelled by the developer']);
  expect((await call(service.url, 'GET', `/v1/pause/${deploy.id}`, { token: live })).body.status).toBe('cancelled');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  await page.goto(`${service.url}/console/pauses`);
  await expect.poll(() => page.url()).toBe(`${service.url}/console/sign-in`);
}, 120_000);

it('works without JavaScript: sign in, the list, cancel', async () => {
  const account = await call(service.url, 'POST', '/v1/auth/register', {
    body: { email: `nojs.${Date.now()}@example.com`, password: 'a long enough password' },
  });
  const pause = await createPause(service.url, account.body.keys.test, { title: 'Rotate the TLS keys?' });
  const watched = await openWatchedPage(browser, { viewport: PHONE, javaScriptEnabled: false });
  opened.push(watched);
  const { page } = watched;
  await page.goto(`${service.url}/console/sign-in`);
  await page.getByLabel('Email').fill(account.body.developer.email);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pauses' }).waitFor();
  await page.getByRole('link', { name: 'Test' }).click();
  await page.getByRole('link', { name: 'Rotate the TLS keys?' }).click();
  await page.getByRole('link', { name: 'Cancel this pause…' }).click();
  await page.getByRole('button', { name: 'Cancel the pause' }).click();
  await page.getByText('The pause is cancelled.').waitFor();
  const status = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: account.body.keys.test });
  expect(status.body.status).toBe('cancelled');
}, 60_000);
