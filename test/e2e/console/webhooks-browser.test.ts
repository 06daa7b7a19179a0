import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
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
import { createPause, eventually } from '../../helpers/pauses.js';
import { webhookTests } from '../../helpers/webhook-service.js';

// The console's webhooks in a real Chromium: a developer adds a webhook
// whose receiver (real HTTPS, a throw-away CA the service trusts) answers
// 500, cancels a pause through the API, finds the failed delivery on the
// pause and in the webhook's log, fixes the receiver, presses Redeliver and
// sees it delivered; then removes the webhook. Every new page is checked by
// axe-core and photographed on a phone and a desktop into test-artifacts/.

const webhooks = webhookTests({ env: { WEBHOOK_RETRY_SCHEDULE_MS: '100' } });
let browser: Browser;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

// Only the service's origin is contacted, with no script error or CSP
// violation; Chromium's note on the one deliberate 400 (a refused URL) aside.
afterEach(async () => {
  await closeCleanPages(opened.splice(0), new URL(webhooks.service.url).origin, [400]);
});

const signIn = (page: Page, account: Account) => signInToConsole(page, webhooks.service.url, account);

it('adds a webhook, sees a failed delivery on the pause and in the log, redelivers it, and removes it', async () => {
  const watched = await openWatchedPage(browser, { viewport: DESKTOP });
  opened.push(watched);
  const { page } = watched;
  const account = await registerAccount(webhooks.service.url);
  await signIn(page, account);

  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  await page.getByText('No live webhooks yet.').waitFor();
  await look(page, 'webhooks-empty');

  // A URL the API refuses: the error is on the form.
  await page.getByLabel('URL').fill('https://10.1.2.3/hook');
  await page.getByRole('button', { name: 'Add the webhook' }).click();
  await expect.poll(() => page.getByRole('alert').count()).toBe(1);
  await look(page, 'webhooks-error');

  const url = `${webhooks.receiver.url}/hooks/pausepoint`;
  webhooks.receiver.setDefault({ status: 500, body: 'database is down' });
  await page.getByLabel('URL').fill(url);
  await page.getByLabel('pause.voted').check();
  await page.getByRole('button', { name: 'Add the webhook' }).click();
  await page.getByRole('heading', { name: 'Webhook added: its signing secret' }).waitFor();
  const secret = (await page.locator('code[data-copy-label="the signing secret"]').textContent())!;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  await expect.poll(() => page.getByRole('button', { name: 'Copy the signing secret' }).count()).toBe(1);
  await look(page, 'webhooks-added');
  await page.goto(`${webhooks.service.url}/console/webhooks`);
  await page.getByRole('link', { name: url, exact: true }).waitFor();
  expect(await page.content()).not.toContain(secret);
  await look(page, 'webhooks');
  // A long URL wraps only after a / . ? & = or -, never inside a word, however wide the Events column is.
  const long = `${webhooks.receiver.url}/hooks/pausepoint/deliveries-from-production/approvals?team=platform&environment=production`;
  expect(
    (
      await call(webhooks.service.url, 'POST', '/v1/webhooks', {
        token: account.live,
        body: {
          url: long,
          events: ['pause.responded', 'pause.timed_out', 'pause.cancelled'],
          secret: 'whsec_a_long_enough_secret_for_the_test_0123',
        },
      })
    ).status,
  ).toBe(201);
  await page.goto(`${webhooks.service.url}/console/webhooks`);
  for (const width of [DESKTOP.width, 700, PHONE.width]) {
    await page.setViewportSize({ ...DESKTOP, width });
    const lines = await linesOf(page.getByRole('link', { name: long, exact: true }));
    expect(lines.join('')).toBe(long);
    for (const line of lines.slice(0, -1)) expect(line, `${width}px: ${lines.join(' | ')}`).toMatch(/[/.?&=-]$/);
  }
  await page.setViewportSize(DESKTOP);
  await call(
    webhooks.service.url,
    'DELETE',
    `/v1/webhooks/${(await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.live })).body.data.find((w: { url: string }) => w.url === long).id}`,
    { token: account.live },
  );
  await page.goto(`${webhooks.service.url}/console/webhooks`);

  // A pause created and cancelled through the API: its event fails to deliver.
  const pause = await createPause(webhooks.service.url, account.live, { title: 'Ship the release?' });
  expect((await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: account.live })).status).toBe(
    200,
  );
  const [webhook] = (await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.live })).body.data;
  await eventually(async () => {
    const [delivery] = (
      await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries`, { token: account.live })
    ).body.data;
    expect(delivery?.status).toBe('failed');
  });

  await page.goto(`${webhooks.service.url}/console/pauses/${pause.id}`);
  const section = page.getByRole('region', { name: 'Webhook deliveries' });
  await section.getByText('HTTP 500').waitFor();
  await section.getByText('Failed').waitFor();
  await look(page, 'pause-deliveries');

  await section.getByRole('link', { name: url, exact: true }).click();
  await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
  const row = page.locator('tbody tr').first();
  await row.getByText('Failed').waitFor();
  expect(await row.textContent()).toContain('pause.cancelled');
  await look(page, 'webhook-deliveries');

  // Only failed deliveries, through the filter.
  await page.getByLabel('Status').selectOption('failed');
  await page.getByRole('button', { name: 'Show' }).click();
  await expect.poll(() => page.locator('tbody tr').count()).toBe(1);

  // The receiver is fixed; Redeliver sends it again.
  webhooks.receiver.reset();
  webhooks.receiver.setDefault({ status: 200 });
  await page.getByRole('button', { name: /^Redeliver/ }).click();
  await page.getByText('The delivery is queued to be sent again.').waitFor();
  await webhooks.receiver.waitForRequests(1);
  await expect
    .poll(
      async () => {
        await page.goto(`${webhooks.service.url}/console/webhooks/${webhook.id}`);
        return page.locator('tbody tr').first().locator('.status').textContent();
      },
      { timeout: 10_000 },
    )
    .toBe('Delivered');
  expect(await page.getByRole('button', { name: /^Redeliver/ }).count()).toBe(0);
  await page.goto(`${webhooks.service.url}/console/pauses/${pause.id}`);
  await section.getByText('HTTP 200').waitFor();

  // Removing asks first.
  await page.goto(`${webhooks.service.url}/console/webhooks/${webhook.id}`);
  await page.getByRole('link', { name: 'Remove this webhook…' }).click();
  await page.getByRole('heading', { name: url }).waitFor();
  await look(page, 'webhook-remove');
  await page.getByRole('button', { name: 'Remove the webhook' }).click();
  await page.getByText('The webhook is removed.').waitFor();
  await page.getByText('No live webhooks yet.').waitFor();
  expect((await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.live })).body.data).toEqual([]);
}, 120_000);

it('works without JavaScript, on a phone: add a test webhook, see its secret, remove it', async () => {
  const watched = await openWatchedPage(browser, { viewport: PHONE, javaScriptEnabled: false });
  opened.push(watched);
  const { page } = watched;
  const account = await registerAccount(webhooks.service.url);
  await signIn(page, account);
  await page.goto(`${webhooks.service.url}/console/webhooks`);
  await page.getByRole('link', { name: 'Test' }).click();
  await page.getByLabel('URL').fill(`${webhooks.receiver.url}/nojs`);
  await page.getByRole('button', { name: 'Add the webhook' }).click();
  const secret = (await page.locator('code[data-copy-label="the signing secret"]').textContent())!;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  const [webhook] = (await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.test })).body.data;
  expect(webhook.events).toEqual(['pause.responded', 'pause.timed_out', 'pause.cancelled']);
  await page.getByRole('link', { name: /^Remove/ }).click();
  await page.getByRole('button', { name: 'Remove the webhook' }).click();
  await page.getByText('The webhook is removed.').waitFor();
  expect((await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.test })).body.data).toEqual([]);
}, 60_000);
