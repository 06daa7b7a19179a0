import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  artifactsDir,
  checkAccessibility,
  closeCleanPages,
  launchBrowser,
  openWatchedPage,
  signInToConsole,
  type WatchedPage,
} from '../../helpers/browser.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { nextLink } from '../../helpers/inbox.js';
import { createPause } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// A pause's form in a real Chromium (issue 25, item 2): on the response page,
// a personal reviewer link, the inbox and the console's pause page, on a phone
// (390x844) and a desktop (1280x800), with and without JavaScript. A person
// fills a field and approves and sees the outcome; a field the server cannot
// read comes back with its error beside it; reject is not held back by the
// browser's checks of fields it does not send. axe finds no serious or
// critical violation on any of them (without JavaScript, on the page as served).

let smtp: SmtpReceiver;
let service: TestService;
let browser: Browser;
let dev: Account;
let opened: WatchedPage[] = [];

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

// Only the service's origin, no script error or CSP violation; Chromium notes the deliberate 400 pages.
afterEach(async () => {
  const pages = opened;
  opened = [];
  await closeCleanPages(pages, new URL(service.url).origin, [400]);
});

const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const SIZES = [
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const;

async function open(options: BrowserContextOptions): Promise<Page> {
  const watched = await openWatchedPage(browser, options);
  opened.push(watched);
  return watched.page;
}

const schema = {
  type: 'object',
  properties: {
    amount: {
      type: 'number',
      minimum: 1,
      maximum: 5000,
      title: 'Amount (USD)',
      description: 'At most the order total.',
    },
    reason: {
      title: 'Reason',
      oneOf: [
        { const: 'damaged', title: 'Arrived damaged' },
        { const: 'late', title: 'Arrived late' },
      ],
    },
    notify: { type: 'boolean', title: 'Tell the customer' },
    note: { type: 'string', 'x-multiline': true, maxLength: 500, title: 'Note to the customer' },
    lines: { type: 'array', items: { type: 'object' }, title: 'Order lines' },
  },
  required: ['amount', 'reason'],
  additionalProperties: false,
};
const proposed = { amount: 1250, reason: 'damaged', notify: true, lines: [{ sku: 'A1', qty: 2 }] };
const refund = {
  title: 'Refund order 8812?',
  body: 'The customer reports a cracked screen.',
  options: ['approve', 'reject'],
  form: { schema, values: proposed, on: ['approve'] },
  require_text: ['reject'],
  options_style: { reject: 'danger' },
};

const readPause = async (id: string, key = dev.test) =>
  (await call(service.url, 'GET', `/v1/pause/${id}`, { token: key })).body;

/** Clicks what submits the form and waits for the page it leads to; returns that page's status. */
async function submitBy(page: Page, action: () => Promise<void>): Promise<number> {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST');
  const loaded = page.waitForEvent('load');
  await action();
  const response = await posted;
  await loaded;
  return response.status();
}

/** No sideways scrolling: nothing wider than the window. */
/**
 * axe and the width check run as scripts, which a page without JavaScript
 * cannot run: the page as it was served there (its DOM, which no script
 * changed) is checked in a page with JavaScript on, at the same size, loaded
 * at the same address first (so its stylesheet and CSP apply), its scripts
 * left out.
 */
async function checkAsServed(served: Page, address: string, size: BrowserContextOptions, name: string) {
  const html = (await served.content()).replace(/<script\b[\s\S]*?<\/script>/gi, '');
  const page = await open(size);
  await page.goto(address);
  await page.setContent(html);
  expect(await page.locator('script').count()).toBe(0);
  await checkAccessibility(page, name);
  await fitsWidth(page);
}

const fitsWidth = async (page: Page) =>
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
    page.viewportSize()?.width ?? 0,
  );

describe('the response page’s form', () => {
  for (const [size, viewport] of SIZES) {
    for (const javaScriptEnabled of [false, true]) {
      it(`on a ${size}, JavaScript ${javaScriptEnabled ? 'on' : 'off'}: a bad field comes back beside it; fixed, approve records the edits`, async () => {
        const pause = await createPause(service.url, dev.test, refund);
        const page = await open({ ...viewport, javaScriptEnabled });
        await page.goto(pause.response_url);
        // axe and layout measures run as scripts in the page; without JavaScript, on the page as served.
        const measure = async (name: string) => {
          if (!javaScriptEnabled)
            return checkAsServed(page, pause.response_url, viewport, `${name}, ${size}, no JavaScript`);
          await checkAccessibility(page, `${name}, ${size}`);
          await fitsWidth(page);
        };
        await measure('form page');
        // Prefilled, each input by its label.
        expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('1250');
        expect(await page.getByLabel('Reason').inputValue()).toBe('damaged');
        expect(await page.getByLabel('Tell the customer').isChecked()).toBe(true);
        expect(await page.getByLabel('Amount (USD)').getAttribute('aria-describedby')).toBe('field-0-hint');
        expect(await page.locator('#field-0-hint').textContent()).toBe('At most the order total.');
        // Text large enough that a phone does not zoom into the input.
        if (javaScriptEnabled) {
          for (const label of ['Amount (USD)', 'Reason', 'Order lines']) {
            const px = await page.getByLabel(label).evaluate((e) => Number.parseFloat(getComputedStyle(e).fontSize));
            expect(px, label).toBeGreaterThanOrEqual(16);
          }
        }

        await page.getByLabel('Amount (USD)').fill('900');
        await page.getByLabel('Reason').selectOption('late');
        await page.getByLabel('Tell the customer').uncheck();
        await page.getByLabel('Order lines').fill('[{"sku": "A1", "qty": }]');
        expect(await submitBy(page, () => page.getByRole('button', { name: 'approve' }).click())).toBe(400);
        // The summary on top, the error beside its field, what was typed kept.
        await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Order lines is not valid JSON/);
        const lines = page.getByLabel('Order lines');
        expect(await lines.getAttribute('aria-invalid')).toBe('true');
        expect(await lines.getAttribute('aria-describedby')).toBe('field-4-hint field-4-error');
        expect(await page.locator('#field-4-error').textContent()).toMatch(/^is not valid JSON/);
        expect(await lines.inputValue()).toBe('[{"sku": "A1", "qty": }]');
        expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('900');
        expect(await page.getByLabel('Reason').inputValue()).toBe('late');
        expect(await page.getByLabel('Tell the customer').isChecked()).toBe(false);
        await measure('form page with an error');
        if (javaScriptEnabled)
          await page.screenshot({ path: join(artifactsDir(), `form-page-error-${size}.png`), fullPage: true });

        await lines.fill('[{"sku": "A1", "qty": 1}]');
        expect(await submitBy(page, () => page.getByRole('button', { name: 'approve' }).click())).toBe(303);
        await page.getByText('Thank you — the answer has been recorded.').waitFor();
        expect((await readPause(pause.id)).response).toMatchObject({
          choice: 'approve',
          values: { amount: 900, reason: 'late', notify: false, lines: [{ sku: 'A1', qty: 1 }] },
          edited: true,
        });
      }, 60_000);
    }
  }

  it('the browser’s own checks hold back approve, not reject: a reject with the amount emptied is recorded', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const page = await open(DESKTOP);
    await page.goto(pause.response_url);
    await page.getByLabel('Amount (USD)').fill('');
    await page.getByRole('button', { name: 'approve' }).click();
    // The required field stops the submit in the browser.
    expect(await page.getByLabel('Amount (USD)').evaluate((e) => (e as HTMLInputElement).validity.valueMissing)).toBe(
      true,
    );
    expect((await readPause(pause.id)).status).toBe('pending');
    // A reject without its required reason comes back with the error beside the comment box.
    expect(await submitBy(page, () => page.getByRole('button', { name: 'reject' }).click())).toBe(400);
    expect(await page.locator('#text-error').textContent()).toMatch(/^is required: a reason must be given/);
    expect(await page.getByLabel(/^Comment/).getAttribute('aria-invalid')).toBe('true');
    await checkAccessibility(page, 'form page, reason missing');
    await page.getByLabel(/^Comment/).fill('Not covered by the warranty.');
    expect(await submitBy(page, () => page.getByRole('button', { name: 'reject' }).click())).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({ choice: 'reject', values: null, edited: false });
  }, 60_000);
});

describe('values a browser would change if they were drawn naively, approved untouched', () => {
  const approveUntouched = async (form: object) => {
    const pause = await createPause(service.url, dev.test, { title: 'Send it?', options: ['approve', 'reject'], form });
    const page = await open(DESKTOP);
    await page.goto(pause.response_url);
    expect(await submitBy(page, () => page.getByRole('button', { name: 'approve' }).click())).toBe(303);
    return { page, response: (await readPause(pause.id)).response };
  };

  it('a multi-line string on a plain string field (a tool’s email body) keeps its line breaks', async () => {
    const schema = { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } } };
    const values = { to: 'ada@example.com', body: 'Hi Ada,\n\nYour refund is on its way.\r\nBest,\n  Support\n' };
    const { response } = await approveUntouched({ schema, values });
    expect(response).toMatchObject({ choice: 'approve', values, edited: false });
  }, 60_000);

  it('a date-time with zero seconds, which the browser writes without them, is kept as proposed', async () => {
    const schema = { type: 'object', properties: { at: { type: 'string', format: 'date-time', title: 'Send at' } } };
    const values = { at: '2026-12-01T09:30:00+00:00' };
    const { response } = await approveUntouched({ schema, values });
    expect(response).toMatchObject({ choice: 'approve', values, edited: false });
  }, 60_000);
});

describe('a personal reviewer link, the inbox and the console', () => {
  it('a reviewer edits on their page, another votes in the inbox; the console shows both beside the proposed', async () => {
    const ann = `ann.${Date.now()}@example.com`;
    const bob = `bob.${Date.now()}@example.com`;
    const pause = await createPause(service.url, dev.live, {
      ...refund,
      reviewers: [{ email: ann }, { email: bob }],
      quorum: 2,
    });

    // Ann, on her phone: the page as axe sees it, then her answer with JavaScript off.
    const looked = await open(PHONE);
    await looked.goto(pause.reviewers[0].response_url);
    await checkAccessibility(looked, 'reviewer form page, phone');
    await fitsWidth(looked);
    const annPage = await open({ ...PHONE, javaScriptEnabled: false });
    await annPage.goto(pause.reviewers[0].response_url);
    await annPage.getByLabel('Amount (USD)').fill('1000');
    expect(await submitBy(annPage, () => annPage.getByRole('button', { name: 'approve' }).click())).toBe(303);
    await annPage.getByText('Thank you — your vote has been recorded.').waitFor();

    // Bob, in his inbox on a desktop: a bad field in the card, then a fix.
    const bobPage = await open(DESKTOP);
    await bobPage.goto(`${service.url}/inbox/sign-in`);
    await bobPage.getByLabel('Your email address').fill(bob);
    await bobPage.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await bobPage.getByRole('heading', { name: 'Check your email' }).waitFor();
    await bobPage.goto(await nextLink(smtp, bob));
    await bobPage.getByRole('button', { name: 'Sign in' }).click();
    await bobPage.getByRole('heading', { name: 'Your inbox' }).waitFor();
    const card = bobPage.locator('article', { has: bobPage.getByRole('heading', { name: 'Refund order 8812?' }) });
    expect(await card.getByLabel('Amount (USD)').inputValue()).toBe('1250');
    await checkAccessibility(bobPage, 'inbox with a form, desktop');
    await card.getByLabel('Order lines').fill('nope');
    expect(await submitBy(bobPage, () => card.getByRole('button', { name: 'approve' }).click())).toBe(400);
    const again = bobPage.locator('article', { has: bobPage.getByRole('heading', { name: 'Refund order 8812?' }) });
    expect(await again.getByRole('alert').textContent()).toMatch(/Your vote was not recorded/);
    expect(await again.getByLabel('Order lines').inputValue()).toBe('nope');
    expect(await again.getByLabel('Order lines').getAttribute('aria-invalid')).toBe('true');
    await checkAccessibility(bobPage, 'inbox with a form error, desktop');
    await bobPage.setViewportSize({ width: 390, height: 844 });
    await checkAccessibility(bobPage, 'inbox with a form error, phone');
    await fitsWidth(bobPage);
    await bobPage.setViewportSize({ width: 1280, height: 800 });
    await again.getByLabel('Order lines').fill(JSON.stringify(proposed.lines));
    expect(await submitBy(bobPage, () => again.getByRole('button', { name: 'approve' }).click())).toBe(303);
    await bobPage.getByText(/Your vote “approve” on “Refund order 8812\?” has been recorded/).waitFor();

    const decided = await readPause(pause.id, dev.live);
    expect(decided.status).toBe('responded');
    expect(decided.response).toMatchObject({ values: proposed, edited: false });

    // The console: the outcome kept, Ann's vote with the amount marked changed.
    for (const [size, viewport] of SIZES) {
      const page = await open(viewport);
      await signInToConsole(page, service.url, dev);
      await page.goto(`${service.url}/console/pauses/${pause.id}`);
      const annVote = page.locator('tr', { hasText: ann }).locator('.form-values');
      expect(await annVote.locator('.label').textContent()).toBe('Values (1 changed)');
      expect(await annVote.locator('dd.changed').textContent()).toBe('1000 changed, proposed 1250');
      expect(await page.locator('#outcome ~ dl .form-values .label').textContent()).toBe('Kept (as proposed)');
      await page.screenshot({ path: join(artifactsDir(), `form-console-pause-${size}.png`), fullPage: true });
      await checkAccessibility(page, `console pause with values, ${size}`);
      await fitsWidth(page);
    }
  }, 120_000);
});
