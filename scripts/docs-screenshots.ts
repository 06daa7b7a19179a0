// Renders the pictures in docs/: the notification email, the response page
// (with and without a form) and a named reviewer's page, as a recipient sees them, and the developer's
// console (the test-mode pauses and one pause), from a real service in test mode.
// Run: npx tsx scripts/docs-screenshots.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService } from '../src/service.js';

const dir = mkdtempSync(join(tmpdir(), 'pausepoint-docs-'));
const service = await startService(
  loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, PORT: '0', LOG_LEVEL: 'warn' }),
  createLogger('warn'),
);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const base = service.url!;
  const post = async (path: string, body: unknown, key?: string) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    return (await response.json()) as any;
  };
  const account = await post('/v1/auth/register', { email: 'docs@example.com', password: 'documentation' });
  const pause = await post(
    '/v1/pause',
    {
      title: 'Deploy v2.4.1 to production?',
      body: 'Changes: 14 commits, 2 database migrations.\nRollback: redeploy v2.4.0.',
      options: ['approve', 'reject'],
      allow_text: true,
      expires_in: 5400,
      notify: { email: ['ops@example.com'] },
    },
    account.keys.test,
  );
  const notification = await (
    await fetch(`${base}/v1/pause/${pause.id}/notifications/${pause.notifications[0].id}`, {
      headers: { authorization: `Bearer ${account.keys.test}` },
    })
  ).json();

  const page = await browser.newPage({ viewport: { width: 640, height: 560 } });
  await page.setContent(notification.html);
  await page.screenshot({ path: 'docs/email.png', fullPage: true });
  const phone = await browser.newPage({ viewport: { width: 390, height: 760 } });
  await phone.goto(pause.response_url);
  await phone.screenshot({ path: 'docs/response-page.png', fullPage: true });
  await phone.fill('textarea', 'Go ahead.');
  await phone.click('button[value="approve"]');
  await phone.waitForURL(/answered=1/);
  await phone.screenshot({ path: 'docs/response-page-answered.png', fullPage: true });

  // A pause with a form (approve with edits): the response page on a phone and a desktop.
  const refund = await post(
    '/v1/pause',
    {
      title: 'Refund order #8812?',
      body: 'The customer reports the screen arrived cracked. Order total: $1,450.',
      options: ['approve', 'reject'],
      options_style: { reject: 'danger' },
      require_text: ['reject'],
      expires_in: 5400,
      form: {
        schema: {
          type: 'object',
          properties: {
            amount: {
              type: 'number',
              minimum: 1,
              maximum: 1450,
              title: 'Amount (USD)',
              description: 'At most the order total.',
            },
            reason: {
              title: 'Reason',
              oneOf: [
                { const: 'damaged', title: 'Arrived damaged' },
                { const: 'late', title: 'Arrived late' },
                { const: 'other', title: 'Other' },
              ],
            },
            notify: { type: 'boolean', title: 'Email the customer' },
            note: { type: 'string', 'x-multiline': true, maxLength: 500, title: 'Note to the customer' },
          },
          required: ['amount', 'reason'],
        },
        values: {
          amount: 1450,
          reason: 'damaged',
          notify: true,
          note: 'Sorry about the screen: a full refund is on its way.',
        },
        on: ['approve'],
      },
    },
    account.keys.test,
  );
  const formPhone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await formPhone.goto(refund.response_url);
  await formPhone.screenshot({ path: 'docs/form-page-phone.png', fullPage: true });
  const formDesktop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await formDesktop.goto(refund.response_url);
  await formDesktop.screenshot({ path: 'docs/form-page-desktop.png', fullPage: true });

  // A reviewer's page: on a desktop after voting, waiting for the others; on
  // a phone, another reviewer's before voting.
  const reviewed = await post(
    '/v1/pause',
    {
      title: 'Deploy v2.4.1 to production?',
      body: 'Changes: 14 commits, 2 database migrations.\nRollback: redeploy v2.4.0.',
      options: ['approve', 'reject'],
      allow_text: true,
      expires_in: 5400,
      reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }, { email: 'cy@example.com' }],
      quorum: 2,
      veto: ['reject'],
    },
    account.keys.test,
  );
  const desktop = await browser.newPage({ viewport: { width: 1024, height: 640 } });
  await desktop.goto(reviewed.reviewers[0].response_url);
  await desktop.fill('textarea', 'Fine after the 14:00 stand-up.');
  await desktop.click('button[value="approve"]');
  await desktop.waitForURL(/answered=1/);
  await desktop.screenshot({ path: 'docs/reviewer-page-desktop.png', fullPage: true });
  await phone.goto(reviewed.reviewers[1].response_url);
  await phone.screenshot({ path: 'docs/reviewer-page-phone.png', fullPage: true });

  // The console, signed in as the developer: the test pauses, and the reviewed pause.
  await post('/v1/pause', { title: 'Rotate the database credentials?', expires_in: 3600 }, account.keys.test);
  await desktop.goto(`${base}/console/sign-in`);
  await desktop.fill('#email', 'docs@example.com');
  await desktop.fill('#password', 'documentation');
  await desktop.click('button[type="submit"]');
  await desktop.waitForURL(/\/console\/pauses/);
  await desktop.goto(`${base}/console/pauses?mode=test`);
  await desktop.screenshot({ path: 'docs/console-pauses.png', fullPage: true });
  await desktop.goto(`${base}/console/pauses/${reviewed.id}?mode=test`);
  await desktop.screenshot({ path: 'docs/console-pause.png', fullPage: true });
  console.log(
    'wrote docs/email.png, docs/response-page.png, docs/response-page-answered.png, ' +
      'docs/form-page-phone.png, docs/form-page-desktop.png, ' +
      'docs/reviewer-page-phone.png, docs/reviewer-page-desktop.png, docs/console-pauses.png, docs/console-pause.png',
  );
} finally {
  await browser.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
