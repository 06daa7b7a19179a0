import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { artifactsDir } from './browser.js';

// How the browser tests look at a page: axe-core (no serious or critical
// violation), then a screenshot on a desktop and on a phone into
// test-artifacts/, and axe again at the phone's width.

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const PHONE = { width: 390, height: 800 };
export const DESKTOP = { width: 1280, height: 860 };

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
 * axe, then console-<name>-desktop.png and -phone.png (the page no wider than
 * the phone), then axe on the phone; back to the desktop size.
 */
export async function look(page: Page, name: string): Promise<void> {
  const artifacts = artifactsDir();
  await checkAccessibility(page, name);
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(artifacts, `console-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(artifacts, `console-${name}-phone.png`), fullPage: true });
  // Nothing wider than the phone: no sideways scrolling.
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} fits a phone`).toBeLessThanOrEqual(
    PHONE.width,
  );
  await checkAccessibility(page, `${name} (phone)`);
  await page.setViewportSize(DESKTOP);
}
