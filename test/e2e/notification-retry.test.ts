import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Pausepoint, PausepointError } from '../../sdk/src/index.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause, eventually } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../helpers/smtp.js';

// A failed notification sent again (API and console, one action, through the
// outbox), and how the console shows a failed one, a pause nobody was told
// of, and a test pause's suppressed email.

let smtp: SmtpReceiver;
let service: TestService;
let dev: Account;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startTestService({
    env: {
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'pausepoint <approvals@example.com>',
      WEBHOOK_RETRY_SCHEDULE_MS: '50,50,50',
    },
  });
  dev = await registerAccount(service.url);
});
afterAll(async () => {
  await service?.destroy();
  await smtp?.close();
});
beforeEach(() => {
  smtp.accept();
  smtp.mails.length = 0;
});

const readPause = async (id: string, key = dev.live) =>
  (await call(service.url, 'GET', `/v1/pause/${id}`, { token: key })).body;

const retryPath = (pauseId: string, notificationId: string) =>
  `/v1/pause/${pauseId}/notifications/${notificationId}/retry`;

/** A live pause whose one email failed for good (the SMTP server refused every attempt). */
async function pauseWithFailedEmail(title = 'Deploy v2?') {
  smtp.refuseAll();
  const pause = await createPause(service.url, dev.live, { title, notify: { email: ['ops@example.com'] } });
  await eventually(async () => {
    expect((await readPause(pause.id)).notifications[0]).toMatchObject({ status: 'failed', attempts: 4 });
  }, 10_000);
  smtp.accept();
  return { pause, notificationId: pause.notifications[0].id as string };
}

describe('POST /v1/pause/{id}/notifications/{notification_id}/retry', () => {
  it('queues a failed notification again, and the worker sends it', async () => {
    const { pause, notificationId } = await pauseWithFailedEmail();
    const reply = await call(service.url, 'POST', retryPath(pause.id, notificationId), { token: dev.live });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ id: notificationId, status: 'pending', attempts: 0, sent_at: null });
    const [mail] = await smtp.waitForMails(1);
    expect(mail!.to).toEqual(['ops@example.com']);
    expect(mail!.parsed.subject).toBe('Decision needed: Deploy v2?');
    await eventually(async () => {
      expect((await readPause(pause.id)).notifications[0]).toMatchObject({ status: 'sent', attempts: 1 });
    });
  });

  it('refuses a notification that has not failed with 409', async () => {
    const pause = await createPause(service.url, dev.live, { notify: { email: ['ops@example.com'] } });
    await eventually(async () => expect((await readPause(pause.id)).notifications[0].status).toBe('sent'));
    const reply = await call(service.url, 'POST', retryPath(pause.id, pause.notifications[0].id), { token: dev.live });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('notification_not_failed');
    expect(reply.body.error.message).toContain('sent');
    expect(smtp.mails).toHaveLength(1);
  });

  it("is a 404 for another account's notification, the other mode's, or an unknown one", async () => {
    const { pause, notificationId } = await pauseWithFailedEmail();
    const other = await registerAccount(service.url);
    for (const token of [other.live, other.test, dev.test]) {
      const reply = await call(service.url, 'POST', retryPath(pause.id, notificationId), { token });
      expect(reply.status).toBe(404);
    }
    expect((await call(service.url, 'POST', retryPath(pause.id, 'ntf_nope'), { token: dev.live })).status).toBe(404);
    expect((await readPause(pause.id)).notifications[0].status).toBe('failed');
  });

  it('refuses a test pause’s suppressed notification with 409: test mode sends nothing', async () => {
    const pause = await createPause(service.url, dev.test, { notify: { email: ['ops@example.com'] } });
    const reply = await call(service.url, 'POST', retryPath(pause.id, pause.notifications[0].id), { token: dev.test });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('notification_not_failed');
    expect(reply.body.error.message).toContain('suppressed');
  });

  it('is the SDK’s pauses.retryNotification', async () => {
    const { pause, notificationId } = await pauseWithFailedEmail();
    const client = new Pausepoint({ apiKey: dev.live, baseUrl: service.url });
    const retried = await client.pauses.retryNotification(pause.id, notificationId);
    expect(retried).toMatchObject({ id: notificationId, status: 'pending' });
    await smtp.waitForMails(1);
    await eventually(async () => expect((await readPause(pause.id)).notifications[0].status).toBe('sent'));
    const again = await client.pauses.retryNotification(pause.id, notificationId).catch((error) => error);
    expect(again).toBeInstanceOf(PausepointError);
    expect(again.code).toBe('notification_not_failed');
  });
});
