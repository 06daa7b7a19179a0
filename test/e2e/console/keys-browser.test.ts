import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { sendAppliedBillingEvent } from '../../helpers/billing.js';
import {
  closeCleanPages,
  DESKTOP,
  launchBrowser,
  linesOf,
  lookAtConsolePage as look,
  openWatchedPage,
  PHONE,
  signInToConsole,
  type WatchedPage,
} from '../../helpers/browser.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The keys and usage pages in a real Chromium: a developer rotates the live
// key with the keyboard only, copies the new key with the page's button, and
// the API refuses the old key; the usage page shows the quota and the billing
// history. Every page passes axe-core (no serious or critical violation) and
// is photographed on a phone and a desktop into test-artifacts/.

const SECRET = 'whsec_console_keys_browser_0123456789';

let service: TestService;
let browser: Browser;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  [service, browser] = await Promise.all([
    startTestService({ env: { PAYMENT_WEBHOOK_SECRET: SECRET, PLAN_QUOTAS: 'free:10,pro:100' } }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await service?.destroy();
});

// Only the service's origin is contacted; no script error or CSP violation.
afterEach(() => closeCleanPages(opened.splice(0), new URL(service.url).origin, []));

/** Presses Tab until the element `isTarget` names has the focus. */
async function tabTo(page: Page, isTarget: () => Promise<boolean>, limit = 30): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await isTarget()) return;
  }
  throw new Error('never reached by Tab');
}

const signIn = (page: Page, account: Account) => signInToConsole(page, service.url, account);

const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');

it('rotates the live key with the keyboard, copies the new one, and the API refuses the old one', async () => {
  const account = await registerAccount(service.url);
  const watched = await openWatchedPage(browser, {
    viewport: DESKTOP,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  opened.push(watched);
  const { page } = watched;

  await signIn(page, account);
  expect((await call(service.url, 'GET', '/v1/auth/me', { token: account.live })).status).toBe(200); // cached

  // To the keys page from the navigation, with the keyboard.
  await tabTo(page, async () => (await focusedText(page)) === 'Keys');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  const table = page.getByRole('table', { name: 'Your keys, one per mode' });
  expect(await table.getByRole('cell').first().textContent()).toBe(`${account.live.slice(0, 15)}…`);
  expect(await page.content()).not.toMatch(/svc_(live|test)_[0-9a-f]{48}/);
  await look(page, 'api-keys');

  await tabTo(page, async () => (await focusedText(page)) === 'Rotate the live key…');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Rotate the live key?' }).waitFor();
  await look(page, 'rotate-key');
  await tabTo(page, async () => (await focusedText(page)) === 'Rotate the live key');
  await page.keyboard.press('Enter');

  await page.getByRole('heading', { name: 'Your new live key' }).waitFor();
  const fresh = (await page.locator('#new-key').textContent())!;
  expect(fresh).toMatch(/^svc_live_[0-9a-f]{48}$/);
  expect(fresh).not.toBe(account.live);
  await page.getByText('no longer works').waitFor();
  // The script's copy button, pressed with the keyboard, puts the key on the clipboard.
  await page.getByRole('button', { name: 'Copy the new live key' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Copied the new live key' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(fresh);
  await look(page, 'new-key');
  // On a phone the key wraps in even pieces, never leaving a character or two on a line of their own.
  await page.setViewportSize(PHONE);
  const lines = await linesOf(page.locator('#new-key'));
  expect(lines.join('')).toBe(fresh);
  for (const line of lines) expect(line.length, lines.join(' | ')).toBeGreaterThanOrEqual(9);
  await page.setViewportSize(DESKTOP);

  expect((await call(service.url, 'GET', '/v1/auth/me', { token: account.live })).status).toBe(401);
  expect((await call(service.url, 'GET', '/v1/auth/me', { token: fresh })).status).toBe(200);

  // Back on the keys page: the new key's prefix, never the key.
  await page.getByRole('link', { name: 'Back to your keys' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  expect(await page.content()).not.toContain(fresh);
  expect(await table.getByRole('cell').first().textContent()).toBe(`${fresh.slice(0, 15)}…`);
}, 90_000);

it('shows the usage page: the quota used as a meter and the billing history', async () => {
  const account = await registerAccount(service.url);
  const watched = await openWatchedPage(browser, { viewport: DESKTOP });
  opened.push(watched);
  const { page } = watched;

  await signIn(page, account);
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: 'Usage and plan' }).waitFor();
  await page.getByText('No billing events yet').waitFor();
  await look(page, 'usage-empty');

  for (let i = 0; i < 4; i++) await createPause(service.url, account.live, { title: `Live ${i}` });
  await sendAppliedBillingEvent(service.url, SECRET, 'checkout.session.completed', {
    client_reference_id: account.id,
    customer: `cus_${account.id}`,
    metadata: { plan: 'pro' },
  });
  await page.reload();
  await page.getByText('4 of 100 pauses this month').waitFor();
  const meter = page.getByRole('meter', { name: 'Live pauses this month' });
  expect(await meter.getAttribute('value')).toBe('4');
  const history = page.getByRole('table', { name: /Plan changes, newest first/ });
  expect(await history.getByRole('row').nth(1).getByRole('cell').nth(1).textContent()).toBe('free → pro');
  await look(page, 'usage');
}, 60_000);

it('rotates a key without JavaScript: the new key is on the page, as text to select', async () => {
  const account = await registerAccount(service.url);
  const watched = await openWatchedPage(browser, { viewport: PHONE, javaScriptEnabled: false });
  opened.push(watched);
  const { page } = watched;
  await signIn(page, account);
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('link', { name: 'Rotate the test key…' }).click();
  await page.getByRole('button', { name: 'Rotate the test key' }).click();
  await page.getByRole('heading', { name: 'Your new test key' }).waitFor();
  const fresh = (await page.locator('#new-key').textContent())!;
  expect(fresh).toMatch(/^svc_test_[0-9a-f]{48}$/);
  expect(await page.getByRole('button', { name: /^Copy/ }).count()).toBe(0);
  expect((await call(service.url, 'GET', '/v1/auth/me', { token: account.test })).status).toBe(401);
  expect((await call(service.url, 'GET', '/v1/auth/me', { token: fresh })).status).toBe(200);
}, 60_000);
