import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  artifactsDir,
  closeCleanPages,
  launchBrowser,
  openWatchedPage,
  type WatchedPage,
} from '../../helpers/browser.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The human's response page (/r/{token}) in a real Chromium against a real
// service: what a person sees and does, on a phone, with a keyboard and
// without JavaScript, and what the page must never do.

let service: TestService;
let browser: Browser;
let alice: Account;
let artifacts: string;
let opened: WatchedPage[] = [];

beforeAll(async () => {
  [service, browser] = await Promise.all([startTestService(), launchBrowser()]);
  alice = await registerAccount(service.url);
  artifacts = artifactsDir();
});

afterAll(async () => {
  await browser?.close();
  await service?.destroy();
});

// Every page of every test: nothing but the service's own origin is ever
// contacted, and no script error or CSP violation shows up in the console.
// The only console errors allowed are Chromium's notes on a deliberate
// non-2xx document (the 404 and 409 pages).
afterEach(async () => {
  const pages = opened;
  opened = [];
  await closeCleanPages(pages, new URL(service.url).origin, [404, 409]);
});

const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

async function open(options: BrowserContextOptions = {}): Promise<WatchedPage> {
  const watched = await openWatchedPage(browser, options);
  opened.push(watched);
  return watched;
}

const events = (pauseId: string) =>
  service.store.db.selectFrom('events').selectAll().where('pause_id', '=', pauseId).execute();

const readPause = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: alice.test })).body;

const optionButtons = (page: Page) => page.locator('form button[name="choice"]');
/** All the text in the page, shown or not (stricter than what is visible). */
const pageText = async (page: Page) => (await page.locator('body').textContent()) ?? '';

/** Clicks (or taps) something that submits the form and waits for the page it leads to. */
async function submitBy(page: Page, action: () => Promise<void>) {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST');
  const loaded = page.waitForEvent('load');
  await action();
  const response = await posted;
  await loaded;
  return response;
}

describe('the response page in Chromium', () => {
  it('answers on a phone: question, options, comment, confirmation, one event; a reload does not resubmit', async () => {
    const body = 'Build 481 passed all checks.\nChanges: 12 commits, 1 migration.';
    const pause = await createPause(service.url, alice.test, {
      title: 'Deploy v2.3 to production?',
      body,
      options: ['approve', 'reject', 'wait until Monday'],
      allow_text: true,
    });
    const { page, requests, errors } = await open(PHONE);

    const first = await page.goto(pause.response_url);
    expect(first?.status()).toBe(200);
    expect(await page.title()).toBe('Deploy v2.3 to production?');
    expect(await page.getByRole('heading', { level: 1, name: 'Deploy v2.3 to production?' }).isVisible()).toBe(true);
    const details = page.locator('.details');
    expect(await details.isVisible()).toBe(true);
    expect(await details.textContent()).toBe(body);
    for (const option of pause.options) {
      expect(await page.getByRole('button', { name: option, exact: true }).isVisible(), option).toBe(true);
    }
    expect(await optionButtons(page).count()).toBe(3);
    const comment = page.getByRole('textbox', { name: /Comment/ });
    expect(await comment.isVisible()).toBe(true);
    expect(await comment.evaluate((el) => el.tagName)).toBe('TEXTAREA');
    expect(await page.getByText(/^Time left: 23 h 59 min$/).isVisible()).toBe(true);

    // It fits a phone: no sideways scrolling, buttons inside the screen and
    // big enough to hit with a thumb; the stylesheet really applied.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    for (const button of await optionButtons(page).all()) {
      const box = await button.boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
      expect(box!.height).toBeGreaterThanOrEqual(44);
    }
    // No option is styled as the one to press: they all look alike, the first one too.
    expect(await page.locator('button.primary, button.danger, button.picked').count()).toBe(0);
    const looks = await optionButtons(page).evaluateAll((buttons) =>
      buttons.map((el) => {
        const style = getComputedStyle(el);
        return `${style.backgroundColor} ${style.color} ${style.borderColor}`;
      }),
    );
    expect(new Set(looks).size).toBe(1);
    await page.screenshot({ path: join(artifacts, 'response-page-pending.png'), fullPage: true });

    const text = 'Go after the 14:00 stand-up, please.';
    await comment.tap();
    await page.keyboard.type(text);
    const posted = await submitBy(page, () => page.getByRole('button', { name: 'wait until Monday' }).tap());
    expect(posted.status()).toBe(303);
    expect(page.url()).toBe(`${pause.response_url}?answered=1`);

    expect(await page.getByRole('status').textContent()).toContain('Thank you');
    expect(await page.getByText('Answered', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.answer strong').textContent()).toBe('wait until Monday');
    expect(await page.locator('.answer-text').textContent()).toBe(text);
    expect(await optionButtons(page).count()).toBe(0);
    expect(await page.locator('textarea').count()).toBe(0);
    await page.screenshot({ path: join(artifacts, 'response-page-answered.png'), fullPage: true });

    const read = await readPause(pause.id);
    expect(read).toMatchObject({ status: 'responded', response: { choice: 'wait until Monday', text } });

    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(200);
    expect(await page.getByText('Answered', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.answer strong').textContent()).toBe('wait until Monday');
    // Going back to the form's page shows the final state too (no-store: no stale, live form).
    await page.goBack();
    expect(page.url()).toBe(pause.response_url);
    expect(await page.getByText('Answered', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('form').count()).toBe(0);
    expect(requests.filter((r) => r.startsWith('POST '))).toHaveLength(1);
    const rows = await events(pause.id);
    expect(rows.map((r) => r.type)).toEqual(['pause.responded']);
    expect((await readPause(pause.id)).response.response_at).toBe(read.response.response_at);

    // Its own stylesheet and script loaded, and nothing went wrong in the console.
    const paths = requests.map((r) => new URL(r.split(' ')[1] ?? '').pathname);
    expect(paths).toEqual(expect.arrayContaining(['/assets/page.css', '/assets/page.js']));
    expect(errors).toEqual([]);
  });

  it('can be read and answered with JavaScript turned off', async () => {
    const pause = await createPause(service.url, alice.test, { body: 'No script needed.', allow_text: true });
    const { page, requests } = await open({ ...PHONE, javaScriptEnabled: false });
    await page.goto(pause.response_url);
    expect(await page.getByRole('heading', { name: 'Ship it?' }).isVisible()).toBe(true);
    expect(await page.getByText(/^Time left: 23 h 59 min$/).isVisible()).toBe(true);
    await page.getByLabel('Comment').fill('typed without JS');
    const posted = await submitBy(page, () => page.getByRole('button', { name: 'reject' }).click());
    expect(posted.status()).toBe(303);
    expect(page.url()).toBe(`${pause.response_url}?answered=1`);
    expect(await page.getByText(/Thank you/).isVisible()).toBe(true);
    expect(await page.locator('.answer strong').textContent()).toBe('reject');
    expect(await readPause(pause.id)).toMatchObject({
      status: 'responded',
      response: { choice: 'reject', text: 'typed without JS' },
    });
    expect(requests.filter((r) => r.startsWith('POST '))).toHaveLength(1);
  });

  it('styles an option only as the developer marked it: primary filled, danger red, the rest alike', async () => {
    const pause = await createPause(service.url, alice.test, {
      title: 'Drop the orders_2019 table?',
      options: ['drop', 'keep', 'ask me later'],
      options_style: { keep: 'primary', drop: 'danger' },
    });
    const { page } = await open(PHONE);
    await page.goto(pause.response_url);
    const look = (name: string) =>
      page.getByRole('button', { name, exact: true }).evaluate((el) => {
        const style = getComputedStyle(el);
        return { background: style.backgroundColor, color: style.color };
      });
    expect(await look('keep')).toEqual({ background: 'rgb(31, 95, 209)', color: 'rgb(255, 255, 255)' });
    expect(await look('drop')).toEqual({ background: 'rgba(0, 0, 0, 0)', color: 'rgb(161, 37, 27)' });
    expect(await look('ask me later')).toEqual({ background: 'rgba(0, 0, 0, 0)', color: 'rgb(31, 95, 209)' });
  });

  it('is operable with the keyboard alone: Tab reaches the comment and each option, Enter and Space answer', async () => {
    const focused = (page: Page) =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el || el === document.body) return 'body';
        return el.tagName === 'BUTTON' ? `button:${(el as HTMLButtonElement).value}` : el.tagName.toLowerCase();
      });

    // Enter on the second option, after typing a comment.
    const withText = await createPause(service.url, alice.test, { allow_text: true });
    const { page } = await open();
    await page.goto(withText.response_url);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused(page));
      if (i === 0) await page.keyboard.type('said with keys');
    }
    expect(order).toEqual(['textarea', 'button:approve', 'button:reject']);
    // The focused button shows a visible focus ring.
    expect(
      await page.evaluate(() => {
        const style = getComputedStyle(document.activeElement as Element);
        return `${style.outlineStyle} ${style.outlineWidth}`;
      }),
    ).toBe('solid 3px');
    const viaEnter = await submitBy(page, () => page.keyboard.press('Enter'));
    expect(viaEnter.status()).toBe(303);
    expect(await page.getByText(/Thank you/).isVisible()).toBe(true);
    expect(await readPause(withText.id)).toMatchObject({
      status: 'responded',
      response: { choice: 'reject', text: 'said with keys' },
    });

    // Space on the first option of a question without a comment box.
    const plain = await createPause(service.url, alice.test);
    await page.goto(plain.response_url);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button:approve');
    const viaSpace = await submitBy(page, () => page.keyboard.press('Space'));
    expect(viaSpace.status()).toBe(303);
    expect(await page.getByText(/Thank you/).isVisible()).toBe(true);
    expect((await readPause(plain.id)).response.choice).toBe('approve');
  });

  it('shows final states: expired (naming the default answer) and cancelled, with no buttons', async () => {
    // A page left open while the time runs out says so and stops taking answers
    // (2 s leaves room to load it while still pending on a busy machine).
    const { page } = await open(PHONE);
    const withDefault = await createPause(service.url, alice.test, {
      title: 'Rotate the database password?',
      expires_in: 2,
      timeout_default: 'reject',
    });
    const withoutDefault = await createPause(service.url, alice.test, { expires_in: 1 });
    await page.goto(withDefault.response_url);
    expect(await optionButtons(page).count()).toBe(2);
    await page.getByText(/no decision is needed any more/).waitFor({ timeout: 5000 });
    for (const button of await optionButtons(page).all()) expect(await button.isDisabled()).toBe(true);

    const cancelled = await createPause(service.url, alice.test, { title: 'Restart the cluster?' });
    expect((await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: alice.test })).status).toBe(200);

    await eventually(async () => {
      expect((await readPause(withDefault.id)).status).toBe('timed_out');
      expect((await readPause(withoutDefault.id)).status).toBe('timed_out');
    }, 5000);

    await page.reload();
    expect(await page.getByText('Expired', { exact: true }).isVisible()).toBe(true);
    expect(await page.getByText('The default answer reject was applied.').isVisible()).toBe(true);
    expect(await page.getByRole('button').count()).toBe(0);
    expect(await page.locator('form').count()).toBe(0);
    await page.screenshot({ path: join(artifacts, 'response-page-expired.png'), fullPage: true });

    await page.goto(withoutDefault.response_url);
    expect(await page.getByText('Expired', { exact: true }).isVisible()).toBe(true);
    expect(await pageText(page)).not.toContain('default answer');
    expect(await page.getByRole('button').count()).toBe(0);

    await page.goto(cancelled.response_url);
    expect(await page.getByText('Cancelled', { exact: true }).isVisible()).toBe(true);
    expect(await page.getByText(/withdrew this question/).isVisible()).toBe(true);
    expect(await page.getByRole('button').count()).toBe(0);
    expect(await page.locator('textarea').count()).toBe(0);
  });

  it('never answers on a GET: opening the link or its ?choice= preselect link leaves the pause pending', async () => {
    const pause = await createPause(service.url, alice.test);
    const { page } = await open(PHONE);
    await page.goto(pause.response_url);
    expect(await page.getByRole('status').count()).toBe(0);

    await page.goto(`${pause.response_url}?choice=approve`);
    expect(await page.getByRole('status').textContent()).toContain('You picked approve');
    expect(await optionButtons(page).count()).toBe(2);

    // The preselected option is marked (filled) for the reader to confirm; an unknown one is ignored.
    await page.goto(`${pause.response_url}?choice=reject`);
    expect(await page.getByRole('status').textContent()).toContain('You picked reject');
    expect(await page.locator('button.picked').textContent()).toBe('reject');
    expect(await page.locator('button.picked').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(
      'rgb(31, 95, 209)',
    );
    await page.goto(`${pause.response_url}?choice=maybe`);
    expect(await page.getByRole('status').count()).toBe(0);

    const plainGet = await fetch(`${pause.response_url}?choice=approve`);
    expect(plainGet.status).toBe(200);
    expect((await readPause(pause.id)).status).toBe('pending');
    expect(await events(pause.id)).toHaveLength(0);
  });

  it('answering after someone else did shows the 409 message and the recorded answer', async () => {
    const pause = await createPause(service.url, alice.test, { allow_text: true });
    const { page } = await open(PHONE);
    await page.goto(pause.response_url);
    const api = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: 'approve', text: 'done from the API' },
    });
    expect(api.status).toBe(200);

    await page.getByLabel('Comment').fill('too late');
    const posted = await submitBy(page, () => page.getByRole('button', { name: 'reject' }).click());
    expect(posted.status()).toBe(409);
    expect(await page.getByRole('alert').textContent()).toContain('already been answered');
    expect(await page.getByText('Answered', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.answer strong').textContent()).toBe('approve');
    expect(await page.locator('.answer-text').textContent()).toBe('done from the API');
    expect(await pageText(page)).not.toContain('Thank you');
    expect(await page.getByRole('button').count()).toBe(0);
    expect((await readPause(pause.id)).response).toMatchObject({ choice: 'approve', text: 'done from the API' });
    expect(await events(pause.id)).toHaveLength(1);
  });

  it('sends strict security headers and loads nothing from elsewhere', async () => {
    const pause = await createPause(service.url, alice.test, { allow_text: true });
    for (const url of [pause.response_url, `${service.url}/r/not-a-token`]) {
      const reply = await fetch(url);
      const csp = reply.headers.get('content-security-policy') ?? '';
      expect(csp, url).toContain("default-src 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(reply.headers.get('x-frame-options')).toBe('DENY');
      expect(reply.headers.get('referrer-policy')).toBe('no-referrer');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
    }

    const { page, requests, errors } = await open(PHONE);
    await page.goto(pause.response_url);
    await page.waitForLoadState('networkidle');
    const origin = new URL(service.url).origin;
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const request of requests) expect(new URL(request.split(' ')[1] ?? '').origin, request).toBe(origin);
    expect(errors).toEqual([]);
  });

  it('shows "This link is not valid" with status 404 for a bad token', async () => {
    const pause = await createPause(service.url, alice.test);
    const signature = tokenOf(pause).split('.')[1] ?? '';
    const forged = `${pause.id}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    const { page } = await open(PHONE);
    for (const token of ['nonsense', forged, pause.id]) {
      const response = await page.goto(`${service.url}/r/${token}`);
      expect(response?.status(), token).toBe(404);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This link is not valid');
      expect(await page.getByRole('button').count()).toBe(0);
      expect(await pageText(page)).not.toContain('Ship it?');
    }
    const post = await fetch(`${service.url}/r/${forged}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'choice=approve',
      redirect: 'manual',
    });
    expect(post.status).toBe(404);
    expect(await post.text()).toContain('This link is not valid');
    expect((await readPause(pause.id)).status).toBe('pending');
  });

  it('never shows metadata, before or after the answer', async () => {
    const pause = await createPause(service.url, alice.test, {
      body: 'Look closely.',
      allow_text: true,
      metadata: { secret: 'S3CR3T-META', nested: { also: 'S3CR3T-META' } },
    });
    const { page } = await open(PHONE);
    await page.goto(pause.response_url);
    for (const stage of ['pending', 'answered']) {
      const html = await page.content();
      expect(html, stage).not.toContain('S3CR3T-META');
      expect(html).not.toContain(alice.id);
      const shown = await pageText(page);
      expect(shown).not.toContain('S3CR3T-META');
      expect(shown).not.toContain(pause.id);
      if (stage === 'pending') await submitBy(page, () => page.getByRole('button', { name: 'approve' }).click());
    }
    expect((await readPause(pause.id)).status).toBe('responded');
  });

  it('says a question left open past its deadline has expired: no "decision is needed", no "until"', async () => {
    const pause = await createPause(service.url, alice.test, {
      title: 'Merge the release branch?',
      expires_in: 60,
      allow_text: true,
    });
    const { page } = await open(PHONE);
    // The browser's clock is the test's: the page is surely served while open
    // however slow the machine, and then its own script sees the deadline pass.
    await page.clock.install();
    const served = await page.goto(pause.response_url);
    expect(await served?.text()).toContain('A decision is needed');
    expect(await page.locator('[data-countdown]').textContent()).toMatch(/^Time left: /);

    await page.clock.fastForward(61_000);
    const note = page.getByRole('status').filter({ hasText: 'expired' });
    await note.waitFor({ timeout: 5000 });
    expect(await note.textContent()).toBe('This request has expired: no decision is needed any more.');
    expect(await page.locator('.eyebrow').textContent()).toBe('No longer open');
    const shown = await pageText(page);
    expect(shown).not.toContain('A decision is needed');
    expect(shown).not.toContain('until');
    expect(shown).not.toContain('Time left');
    expect(await page.locator('.time-left').textContent()).toMatch(/^Expired at .+\.$/);
    for (const button of await optionButtons(page).all()) expect(await button.isDisabled()).toBe(true);
    expect(await page.getByRole('textbox').isDisabled()).toBe(true);
    await page.screenshot({ path: join(artifacts, 'response-page-expired-while-open.png'), fullPage: true });
  });

  it("shows times in the reader's own zone, naming it; without JavaScript in UTC", async () => {
    // Tomorrow at 15:30 UTC: 10:30 in New York in winter (EST), 11:30 in summer (EDT).
    const at = new Date();
    at.setUTCDate(at.getUTCDate() + 1);
    at.setUTCHours(15, 30, 0, 0);
    const pause = await createPause(service.url, alice.test, { expires_at: at.toISOString() });
    const inNewYork = /^[A-Z][a-z]{2} \d{1,2}, \d{4}, (10:30\sAM EST|11:30\sAM EDT)$/;

    const { page } = await open({ timezoneId: 'America/New_York', locale: 'en-US' });
    await page.goto(pause.response_url);
    const deadline = page.locator('.time-left time');
    expect(await deadline.getAttribute('datetime')).toBe(pause.expires_at);
    expect(await deadline.textContent()).toMatch(inNewYork);
    expect(await page.locator('.time-left').textContent()).toMatch(/\(until .+ (EST|EDT)\)$/);
    expect(await pageText(page)).not.toContain('UTC');

    // The recorded answer's time too.
    await submitBy(page, () => page.getByRole('button', { name: 'approve' }).click());
    const answeredAt = page.locator('.answer time');
    expect(await answeredAt.textContent()).toMatch(/ (EST|EDT)$/);
    expect(Date.parse((await answeredAt.getAttribute('datetime')) ?? '')).not.toBeNaN();

    // Another zone and language name their own zone.
    const other = await createPause(service.url, alice.test, { expires_at: at.toISOString() });
    const { page: inTokyo } = await open({ timezoneId: 'Asia/Tokyo', locale: 'en-GB' });
    await inTokyo.goto(other.response_url);
    // 15:30 UTC is 00:30 the next day in Tokyo (no daylight saving time).
    expect(await inTokyo.locator('.time-left time').textContent()).toMatch(/00:30 (GMT\+9|JST)$/);

    // Without JavaScript: UTC, said so.
    const { page: noScript } = await open({ javaScriptEnabled: false, timezoneId: 'America/New_York' });
    await noScript.goto(other.response_url);
    const utc = `${pause.expires_at.slice(0, 10)} 15:30 UTC`;
    expect(await noScript.locator('.time-left time').textContent()).toBe(utc);
  });
});
