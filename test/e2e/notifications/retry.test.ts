import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Pausepoint, PausepointError } from '../../../sdk/src/index.js';
import { ConsoleClient, csrfIn } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

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

  it('refuses with 409 once the pause no longer waits: a closed question is not asked again', async () => {
    const { pause, notificationId } = await pauseWithFailedEmail('Closed already?');
    expect((await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.live })).status).toBe(200);
    const reply = await call(service.url, 'POST', retryPath(pause.id, notificationId), { token: dev.live });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('pause_not_pending');
    expect((await readPause(pause.id)).notifications[0].status).toBe('failed');
    expect(smtp.mails).toHaveLength(0);
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

describe('the console', () => {
  /** The pause page's list item of one notification. */
  const itemOf = (html: string, id: string) => {
    const start = html.indexOf(`<li id="${id}">`);
    expect(start).toBeGreaterThan(-1);
    return html.slice(start, html.indexOf('</li>', start));
  };

  async function signedIn(): Promise<ConsoleClient> {
    const client = new ConsoleClient(service.url);
    await client.signIn(dev.email, dev.password);
    return client;
  }

  it('shows a failed notification as failed, warns that nobody was told, and sends it again', async () => {
    const { pause, notificationId } = await pauseWithFailedEmail('Nobody heard of this <one>');
    const client = await signedIn();
    const page = await client.get(`/console/pauses/${pause.id}`);
    expect(page.status).toBe(200);
    // The notification: a word and the failed colour, not the sent one; its error; a button.
    const item = itemOf(page.text, notificationId);
    expect(item).toContain('<span class="status failed"><span aria-hidden="true">✕ </span>Failed</span>');
    expect(item).toContain('SMTP server 127.0.0.1:');
    expect(page.text).toContain(`action="/console/pauses/${pause.id}/notifications/${notificationId}/retry"`);
    expect(page.text).toMatch(/<button type="submit"[^>]*>Send again<\/button>/);
    // The pause as a whole: nobody was told.
    expect(page.text).toMatch(/<p class="notice error" role="alert">[^<]*Nobody was told of this pause/);
    // The timeline's failure is not drawn as the other entries.
    expect(page.text).toMatch(
      /<li class="failed"><div class="what"><span aria-hidden="true">✕ <\/span>Notification failed<\/div>/,
    );

    // The list flags the row, and only that row.
    const quiet = await createPause(service.url, dev.live, { title: 'Told nobody, on purpose' });
    const list = await client.get('/console/pauses');
    const rowOf = (title: string) =>
      list.text.slice(list.text.indexOf(title), list.text.indexOf('</tr>', list.text.indexOf(title)));
    expect(rowOf('Nobody heard of this &lt;one&gt;')).toContain('<span class="status failed">Nobody told</span>');
    expect(rowOf(quiet.title)).not.toContain('Nobody told');

    // Send again: a forged form is refused; the real one queues it, the worker sends it.
    const path = `/console/pauses/${pause.id}/notifications/${notificationId}/retry`;
    expect((await client.post(path, { mode: 'live', csrf: 'not-the-token' })).status).toBe(403);
    const sent = await client.post(path, { mode: 'live', csrf: csrfIn(page.text) });
    expect(sent.status, sent.text).toBe(303);
    expect(sent.location).toBe(`/console/pauses/${pause.id}?resent=1#${notificationId}`);
    await smtp.waitForMails(1);
    await eventually(async () => expect((await readPause(pause.id)).notifications[0].status).toBe('sent'));
    const after = await client.get(`/console/pauses/${pause.id}?resent=1`);
    expect(after.text).toContain('The notification is queued to be sent again.');
    expect(after.text).not.toContain('Nobody was told');
    expect(after.text).toContain('<span class="status sent">Sent</span>');

    // Again, now that it was sent: refused with the reason, on the pause's page.
    const twice = await client.post(path, { mode: 'live', csrf: csrfIn(page.text) });
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('Only a failed notification can be sent again; this one is sent.');
    // Another account's pause is not found.
    const other = await registerAccount(service.url);
    const stranger = new ConsoleClient(service.url);
    await stranger.signIn(other.email, other.password);
    const csrf = await stranger.csrf();
    expect((await stranger.post(path, { mode: 'live', csrf })).status).toBe(404);
  });

  it("previews a test pause's suppressed email, escaped", async () => {
    const pause = await createPause(service.url, dev.test, {
      title: 'Refund <b>€420</b>?',
      body: 'Order <script>alert(1)</script>',
      notify: { email: ['ops@example.com'] },
    });
    const notificationId = pause.notifications[0].id;
    const client = await signedIn();
    const page = await client.get(`/console/pauses/${pause.id}?mode=test`);
    expect(page.status).toBe(200);
    const item = itemOf(page.text, notificationId);
    expect(item).toContain('<span class="status suppressed">Suppressed</span>');
    expect(item).toContain('<summary>Preview what would have been sent</summary>');
    expect(item).toContain('Decision needed: Refund &lt;b&gt;€420&lt;/b&gt;?');
    expect(item).toContain('ops@example.com');
    expect(item).toContain('Order &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(item).toContain(`${pause.response_url}?choice=approve`);
    expect(page.text).not.toContain('<script>alert(1)');
    // Suppressed is not failed: no warning, no button.
    expect(page.text).not.toContain('Nobody was told');
    expect(page.text).not.toContain('Send again');
  });
});
