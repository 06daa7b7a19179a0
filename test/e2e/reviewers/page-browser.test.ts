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
import { createPause, eventsOf, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// A named reviewer's page (/r/{pause}.{reviewer}.{mac}) in a real Chromium
// against a real service: the quorum in counts, their own vote, the outcome,
// never another reviewer's name or comment; with the keyboard alone and on a
// phone. (The API side: test/e2e/reviewers/votes.test.ts; the shared link: test/e2e/responses/page-browser.test.ts.)

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

// Every page: only the service's own origin is contacted, and no script error
// or CSP violation shows up (Chromium notes the deliberate 409 pages).
afterEach(async () => {
  const pages = opened;
  opened = [];
  await closeCleanPages(pages, new URL(service.url).origin, [409]);
});

const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

async function open(options: BrowserContextOptions): Promise<WatchedPage> {
  const watched = await openWatchedPage(browser, options);
  opened.push(watched);
  return watched;
}

const readPause = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: alice.test })).body;
const pageText = async (page: Page) => (await page.locator('body').textContent()) ?? '';
const rule = (page: Page) => page.locator('.quorum .rule').textContent();
const posts = (watched: WatchedPage) => watched.requests.filter((r) => r.startsWith('POST ')).length;

/** Does something that submits the form and waits for the page it leads to. */
async function submitBy(page: Page, action: () => Promise<void>) {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST');
  const loaded = page.waitForEvent('load');
  await action();
  const response = await posted;
  await loaded;
  return response;
}

/** What has the keyboard focus: "textarea", "button:{value}", or "body". */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return 'body';
    return el.tagName === 'BUTTON' ? `button:${(el as HTMLButtonElement).value}` : el.tagName.toLowerCase();
  });

/** No sideways scrolling on a 390 px screen, and every button inside it and big enough for a thumb. */
async function fitsPhone(page: Page) {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  for (const button of await page.getByRole('button').all()) {
    const box = await button.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    expect(box!.height).toBeGreaterThanOrEqual(44);
  }
}

describe("a reviewer's page in Chromium", () => {
  it('two reviewers, quorum 2, keyboard only: a vote shows progress, the second decides, both see the outcome', async () => {
    const pause = await createPause(service.url, alice.test, {
      title: 'Deploy v2.5 to production?',
      body: 'Build 502 passed all checks.\nChanges: 9 commits, 1 migration.',
      allow_text: true,
      reviewers: [
        { email: 'ann@example.com', name: 'Ann Reviewer' },
        { email: 'bob@example.com', name: 'Bob Reviewer' },
      ],
      quorum: 2,
      veto: ['reject'],
    });
    const [ann, bob] = pause.reviewers;

    // Ann, on a desktop: Tab to the comment, type, Tab to "approve", Space.
    const annTab = await open(DESKTOP);
    const annPage = annTab.page;
    expect((await annPage.goto(ann.response_url))?.status()).toBe(200);
    expect(await annPage.getByRole('heading', { level: 1, name: 'Deploy v2.5 to production?' }).isVisible()).toBe(true);
    expect(await rule(annPage)).toBe('2 of 2 reviewers must agree · no votes yet');
    expect(await annPage.getByText('A single vote for reject decides at once.').isVisible()).toBe(true);
    expect(await annPage.getByRole('group', { name: 'Your vote' }).isVisible()).toBe(true);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      await annPage.keyboard.press('Tab');
      order.push(await focused(annPage));
      if (i === 0) await annPage.keyboard.type('Fine by me.');
    }
    expect(order).toEqual(['textarea', 'button:approve', 'button:reject']);
    await annPage.keyboard.press('Shift+Tab');
    expect(await focused(annPage)).toBe('button:approve');
    // The focused button shows a visible focus ring.
    expect(
      await annPage.evaluate(() => {
        const style = getComputedStyle(document.activeElement as Element);
        return `${style.outlineStyle} ${style.outlineWidth}`;
      }),
    ).toBe('solid 3px');
    const annVote = await submitBy(annPage, () => annPage.keyboard.press('Space'));
    expect(annVote.status()).toBe(303);
    expect(annPage.url()).toBe(`${ann.response_url}?answered=1`);

    // Her vote and the progress, still waiting for Bob; no form any more.
    expect(await annPage.getByRole('status').first().textContent()).toBe('Thank you — your vote has been recorded.');
    expect(await annPage.locator('.eyebrow').textContent()).toBe('Your vote is in');
    expect(await annPage.getByText('Waiting for the other reviewers').isVisible()).toBe(true);
    expect(await annPage.locator('.answer').textContent()).toMatch(/^You voted approve at .+\.$/);
    expect(await annPage.locator('.answer-text').textContent()).toBe('Fine by me.');
    expect(await rule(annPage)).toBe('2 of 2 reviewers must agree · 1 of 2 voted so far');
    expect(await annPage.getByText(/^Time left: 23 h 59 min$/).isVisible()).toBe(true);
    expect(await annPage.locator('form').count()).toBe(0);
    expect(await annPage.getByRole('button').count()).toBe(0);
    expect(await annPage.locator('textarea').count()).toBe(0);
    await annPage.screenshot({ path: join(artifacts, 'reviewer-page-voted-desktop.png'), fullPage: true });
    expect((await readPause(pause.id)).status).toBe('pending');

    // Bob, on a phone, sees the count but nothing of Ann's.
    const bobTab = await open(PHONE);
    const bobPage = bobTab.page;
    await bobPage.goto(bob.response_url);
    expect(await rule(bobPage)).toBe('2 of 2 reviewers must agree · 1 of 2 voted so far');
    expect(await bobPage.locator('.eyebrow').textContent()).toBe('A decision is needed');
    for (const html of [await bobPage.content(), await pageText(bobPage)]) {
      for (const secret of ['ann@', 'Ann', 'Fine by me', ann.id, 'bob@', 'Bob']) expect(html).not.toContain(secret);
    }
    await fitsPhone(bobPage);
    await bobPage.screenshot({ path: join(artifacts, 'reviewer-page-phone.png'), fullPage: true });

    // Bob decides with Tab and Enter.
    await bobPage.keyboard.press('Tab');
    expect(await focused(bobPage)).toBe('textarea');
    await bobPage.keyboard.type('Ship it.');
    await bobPage.keyboard.press('Tab');
    expect(await focused(bobPage)).toBe('button:approve');
    const bobVote = await submitBy(bobPage, () => bobPage.keyboard.press('Enter'));
    expect(bobVote.status()).toBe(303);
    expect(await bobPage.getByRole('status').first().textContent()).toBe('Thank you — your vote has been recorded.');
    expect(await bobPage.locator('.eyebrow').textContent()).toBe('Decision recorded');
    expect(await bobPage.getByText('Decided', { exact: true }).isVisible()).toBe(true);
    expect(await bobPage.locator('.answer').first().textContent()).toMatch(/^The decision is approve, made at .+\.$/);
    expect(await bobPage.locator('.answer').nth(1).textContent()).toMatch(/^You voted approve at /);
    expect(await bobPage.locator('.answer-text').textContent()).toBe('Ship it.');
    expect(await rule(bobPage)).toBe('2 of 2 reviewers must agree · 2 of 2 voted');
    expect(await bobPage.getByText('This page no longer takes votes.').isVisible()).toBe(true);
    expect(await bobPage.locator('form').count()).toBe(0);
    await fitsPhone(bobPage);
    await bobPage.screenshot({ path: join(artifacts, 'reviewer-page-decided-phone.png'), fullPage: true });

    // Ann's page, reloaded, shows the outcome too, with her own vote and not Bob's comment.
    await annPage.reload();
    expect(await annPage.getByText('Decided', { exact: true }).isVisible()).toBe(true);
    expect(await annPage.locator('.answer').first().textContent()).toMatch(/^The decision is approve, made at /);
    expect(await annPage.locator('.answer').nth(1).textContent()).toMatch(/^You voted approve at /);
    expect(await annPage.locator('.answer-text').textContent()).toBe('Fine by me.');
    expect(await pageText(annPage)).not.toContain('Ship it');
    expect(await pageText(annPage)).not.toContain('Waiting');
    expect(await annPage.getByRole('button').count()).toBe(0);
    await annPage.screenshot({ path: join(artifacts, 'reviewer-page-decided-desktop.png'), fullPage: true });

    // The same in JSON: the deciding comment only for its author; no veto field added to the API.
    const annJson = await call(service.url, 'GET', `/v1/respond/${tokenOf(ann)}`);
    expect(annJson.body).toMatchObject({ status: 'responded', response: { choice: 'approve', text: null } });
    expect(annJson.body.quorum).toEqual({ needed: 2, reviewers: 2, votes_so_far: 2 });
    expect(annJson.text).not.toContain('Ship it');
    const bobJson = await call(service.url, 'GET', `/v1/respond/${tokenOf(bob)}`);
    expect(bobJson.body.response).toMatchObject({ choice: 'approve', text: 'Ship it.' });

    const decided = await readPause(pause.id);
    expect(decided).toMatchObject({ status: 'responded', response: { choice: 'approve', text: 'Ship it.' } });
    expect(decided.response.responded_by).toMatchObject({ id: bob.id });
    expect(decided.response.votes).toHaveLength(2);
    const responded = (await eventsOf(service, pause.id)).filter((e) => e.type === 'pause.responded');
    expect(responded).toHaveLength(1);
    expect([posts(annTab), posts(bobTab)]).toEqual([1, 1]);
  });

  it('a second vote says so and changes nothing; a late vote after a veto shows the decision', async () => {
    const pause = await createPause(service.url, alice.test, {
      reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }, { email: 'cy@example.com' }],
      quorum: 2,
      veto: ['reject'],
    });
    const [ann, bob, cy] = pause.reviewers;

    // Ann's link open in two tabs: she votes in one, then in the other's stale form.
    const { page: first } = await open(PHONE);
    const { page: stale } = await open(PHONE);
    await Promise.all([first.goto(ann.response_url), stale.goto(ann.response_url)]);
    expect((await submitBy(first, () => first.getByRole('button', { name: 'approve' }).tap())).status()).toBe(303);
    const again = await submitBy(stale, () => stale.getByRole('button', { name: 'reject' }).tap());
    expect(again.status()).toBe(409);
    expect(await stale.getByRole('alert').textContent()).toBe(
      'You have already voted on this question; a vote cannot be changed.',
    );
    expect(await stale.locator('.answer').textContent()).toMatch(/^You voted approve at /);
    expect(await rule(stale)).toBe('2 of 3 reviewers must agree · 1 of 3 voted so far');
    expect(await pageText(stale)).not.toContain('Thank you');
    expect(await stale.locator('form').count()).toBe(0);
    await fitsPhone(stale);

    // Cy's page is open, without JavaScript, when Bob's veto decides.
    const { page: late } = await open({ ...PHONE, javaScriptEnabled: false });
    await late.goto(cy.response_url);
    expect(await late.getByText('A single vote for reject decides at once.').isVisible()).toBe(true);
    const veto = await call(service.url, 'POST', `/v1/respond/${tokenOf(bob)}`, { body: { choice: 'reject' } });
    expect(veto.body).toMatchObject({ status: 'responded', choice: 'reject' });
    const tooLate = await submitBy(late, () => late.getByRole('button', { name: 'approve' }).tap());
    expect(tooLate.status()).toBe(409);
    expect(await late.getByRole('alert').textContent()).toBe('This question has already been answered.');
    expect(await late.getByText('Decided', { exact: true }).isVisible()).toBe(true);
    expect(await late.locator('.answer').first().textContent()).toMatch(/^The decision is reject, made at /);
    expect(await late.getByText('You did not vote.').isVisible()).toBe(true);
    expect(await rule(late)).toBe('2 of 3 reviewers must agree · 2 of 3 voted');
    expect(await late.locator('form').count()).toBe(0);

    const decided = await readPause(pause.id);
    expect(decided).toMatchObject({ status: 'responded', response: { choice: 'reject' } });
    expect(decided.reviewers.map((r: { vote: { choice: string } | null }) => r.vote?.choice ?? null)).toEqual([
      'approve',
      'reject',
      null,
    ]);
    expect((await eventsOf(service, pause.id)).filter((e) => e.type === 'pause.responded')).toHaveLength(1);
  });

  it('a voted page left open past the deadline says it expired and stops saying it waits', async () => {
    const pause = await createPause(service.url, alice.test, {
      reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }],
      quorum: 2,
      expires_in: 60,
    });
    const [ann] = pause.reviewers;
    const voted = await call(service.url, 'POST', `/v1/respond/${tokenOf(ann)}`, { body: { choice: 'approve' } });
    expect(voted.body.status).toBe('pending');
    const { page } = await open(PHONE);
    // The browser's clock is the test's: served while open, then past the deadline.
    await page.clock.install();
    const served = await page.goto(ann.response_url);
    expect(await served?.text()).toContain('Waiting for the other reviewers');

    await page.clock.fastForward(61_000);
    const note = page.getByRole('status').filter({ hasText: 'expired' });
    await note.waitFor({ timeout: 5000 });
    expect(await page.locator('.eyebrow').textContent()).toBe('No longer open');
    expect(await page.getByText('Waiting for the other reviewers').isVisible()).toBe(false);
    expect(await page.getByText(/Reload this page later/).isVisible()).toBe(false);
    expect(await page.locator('.time-left').textContent()).toMatch(/^Expired at .+\.$/);
    expect(await page.locator('.answer').textContent()).toMatch(/^You voted approve at /);
  });
});
