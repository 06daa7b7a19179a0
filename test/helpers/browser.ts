import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

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
