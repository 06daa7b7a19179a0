import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContextOptions, chromium, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';

// A real Chromium for end-to-end tests of the human pages. Only the system
// browser is used: nothing is ever downloaded.

/** Debian's Chromium, or the Chromium or Chrome that CHROMIUM_PATH names (e.g. on a Mac). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Where tests write screenshots (git-ignored); created on first use. */
export function artifactsDir(): string {
  const dir = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

export interface WatchedPage {
  page: Page;
  /** Every request the page made, as "METHOD url". */
  requests: string[];
  /** Console errors and uncaught page errors. */
  errors: string[];
  close(): Promise<void>;
}

/** A page in its own fresh context, with its requests and errors recorded. */
export async function openWatchedPage(browser: Browser, options: BrowserContextOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => void requests.push(`${request.method()} ${request.url()}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => void errors.push(`pageerror: ${error.message}`));
  return { page, requests, errors, close: () => context.close() };
}

/**
 * Closes the pages, and fails if any of them contacted an origin other than
 * the service's, or showed a script error or CSP violation. The only console
 * errors allowed are Chromium's notes on a document sent with one of the
 * `deliberate` statuses (e.g. a 404 page).
 */
export async function closeCleanPages(pages: WatchedPage[], origin: string, deliberate: number[]): Promise<void> {
  // With no deliberate status, the group is one that matches nothing ("()" would match every status).
  const note = new RegExp(
    `^console: Failed to load resource: the server responded with a status of (${deliberate.join('|') || '(?!)'})`,
  );
  for (const watched of pages) {
    for (const request of watched.requests) {
      expect(new URL(request.split(' ')[1] ?? '').origin, request).toBe(origin);
    }
    expect(watched.errors.filter((e) => !note.test(e))).toEqual([]);
    await watched.close();
  }
}

export const PHONE = { width: 390, height: 800 };
export const DESKTOP = { width: 1280, height: 860 };

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Fails on any serious or critical axe-core violation on the page as it is now. */
export async function checkAccessibility(page: Page, name: string): Promise<void> {
  // Not addScriptTag: the page's CSP (rightly) blocks an inline script. A
  // DevTools evaluation is not subject to it, and the page's own CSP stays on.
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document);
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).join(', ')})`);
  });
  expect(violations, name).toEqual([]);
}

/**
 * axe, then a screenshot on a desktop and on a phone into artifactsDir() as
 * <name>-desktop.png and -phone.png; on the phone nothing may be wider than
 * the screen. Leaves the page at desktop size.
 */
export async function lookAt(page: Page, name: string): Promise<void> {
  const artifacts = artifactsDir();
  await checkAccessibility(page, name);
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(artifacts, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(artifacts, `${name}-phone.png`), fullPage: true });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `${name} fits a phone`).toBeLessThanOrEqual(PHONE.width);
  await checkAccessibility(page, `${name} (phone)`);
  await page.setViewportSize(DESKTOP);
}

/** An element's text as the lines it takes on the screen, top to bottom. */
export const linesOf = (locator: Locator): Promise<string[]> =>
  locator.evaluate((element) => {
    const lines = new Map<number, string>();
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        const top = Math.round(rect.top + rect.height / 2);
        const line = [...lines.keys()].find((at) => Math.abs(at - top) < 4) ?? top;
        lines.set(line, (lines.get(line) ?? '') + text[i]);
      }
    }
    return [...lines.entries()].sort(([a], [b]) => a - b).map(([, line]) => line);
  });

/** lookAt for a console page: console-<name>-desktop.png and -phone.png. */
export const lookAtConsolePage = (page: Page, name: string): Promise<void> => lookAt(page, `console-${name}`);

/** Signs in through the console's form with email and password; waits for the pauses page. */
export async function signInToConsole(
  page: Page,
  baseUrl: string,
  account: { email: string; password: string },
): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pauses' }).waitFor();
}
