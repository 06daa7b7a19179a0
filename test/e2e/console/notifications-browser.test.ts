import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  closeCleanPages,
  DESKTOP,
  launchBrowser,
  lookAtConsolePage as look,
  openWatchedPage,
  signInToConsole,
  type WatchedPage,
} from '../../helpers/browser.js';
import { call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// A pause whose only email failed, in a real Chromium: the warning, the failed
// badge and the Send again button pass axe and fit a phone, and the button,
// pressed from the keyboard, sends the email. A test pause's suppressed email
// preview passes axe too.

let service: TestService;
let smtp: SmtpReceiver;
let browser: Browser;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  [service, browser] = await Promise.all([
    startTestService({
      env: { SMTP_URL: smtp.url, EMAIL_FROM: 'approvals@example.com', WEBHOOK_RETRY_SCHEDULE_MS: '50,50,50' },
    }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await service?.destroy();
  await smtp?.close();
});
afterEach(() => closeCleanPages(opened.splice(0), new URL(service.url).origin, []));

it('flags a pause nobody was told of and sends its email again; previews a suppressed one', async () => {
  const dev = await registerAccount(service.url);
  smtp.refuseAll();
  const pause = await createPause(service.url, dev.live, {
    title: 'Deploy v2.4.1 to production?',
    notify: { email: ['ops@example.com'] },
  });
  await eventually(async () => {
    const read = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: dev.live });
    expect(read.body.notifications[0].status).toBe('failed');
  }, 10_000);
  smtp.accept();

  const watched = await openWatchedPage(browser, { viewport: DESKTOP });
  opened.push(watched);
  const { page } = watched;
  await signInToConsole(page, service.url, dev);
  await page.getByText('Nobody told').waitFor();
  await look(page, 'pauses-nobody-told');
  await page.getByRole('link', { name: 'Deploy v2.4.1 to production?' }).click();
  await page.getByRole('alert').getByText('Nobody was told of this pause').waitFor();
  await look(page, 'pause-notification-failed');

  const button = page.getByRole('button', { name: 'Send again: email to ops@example.com' });
  await button.focus();
  await page.keyboard.press('Enter');
  await page.getByText('The notification is queued to be sent again.').waitFor();
  await smtp.waitForMails(1);

  const test = await createPause(service.url, dev.test, {
    title: 'Refund order #1042 (€249)?',
    notify: { email: ['ops@example.com'] },
  });
  await page.goto(`${service.url}/console/pauses/${test.id}?mode=test`);
  await page.getByText('Preview what would have been sent').click();
  await page.getByText('Decision needed: Refund order #1042 (€249)?').waitFor();
  await look(page, 'pause-notification-preview');
}, 120_000);
