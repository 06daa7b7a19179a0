import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep } from '../../helpers/pauses.js';
import { startTestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';
import { webhookTests } from '../../helpers/webhook-service.js';

const SCHEDULE = [200, 400, 600];

let smtp: SmtpReceiver;
let dev: Account;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
});
afterAll(async () => {
  await smtp?.close();
});
beforeEach(() => {
  smtp.accept();
  smtp.mails.length = 0;
});

// The service that notifies; its HTTPS receiver stands in for Slack. Set up
// after the SMTP receiver's hooks, so the service starts once the SMTP receiver
// listens (its env names it) and stops before that closes.
const notifying = webhookTests({
  env: () => ({
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'pausepoint <approvals@example.com>',
    WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(','),
  }),
});

beforeAll(async () => {
  dev = await registerAccount(notifying.service.url);
});

const readPause = async (id: string, key = dev.live) =>
  (await call(notifying.service.url, 'GET', `/v1/pause/${id}`, { token: key })).body;

describe('email', () => {
  it('sends each live recipient their own message with both parts, option links and no metadata', async () => {
    const pause = await createPause(notifying.service.url, dev.live, {
      title: 'Deploy v2 to production?',
      body: 'Changes: 14 commits.\n<script>alert(1)</script>',
      options: ['approve', 'reject'],
      expires_in: 3600,
      metadata: { secret_ref: 'META-S3CRET' },
      notify: { email: ['ops@example.com', 'cto@example.com'] },
    });
    expect(pause.notifications).toHaveLength(2);
    expect(pause.notifications[0]).toMatchObject({
      channel: 'email',
      to: 'ops@example.com',
      status: 'pending',
      attempts: 0,
    });

    const mails = await smtp.waitForMails(2);
    expect(mails.map((m) => m.to).sort()).toEqual([['cto@example.com'], ['ops@example.com']]);
    for (const mail of mails) {
      expect(mail.from).toBe('approvals@example.com');
      expect(mail.parsed.subject).toBe('Decision needed: Deploy v2 to production?');
      const text = mail.parsed.text ?? '';
      const html = String(mail.parsed.html);
      expect(text).toContain('Changes: 14 commits.');
      // Who asks: the account's email, so the recipient can tell a real request from a fake.
      expect(text).toContain(`Asked by ${dev.email}.`);
      expect(html).toContain(`Asked by <strong>${dev.email}</strong>`);
      for (const option of ['approve', 'reject']) {
        const link = `${pause.response_url}?choice=${option}`;
        expect(text).toContain(link);
        expect(html).toContain(link);
      }
      expect(text).toContain(pause.response_url);
      expect(html).not.toContain('<script>');
      expect(html).toContain('&lt;script&gt;');
      expect(mail.raw).not.toContain('META-S3CRET');
      expect(mail.raw).not.toContain(dev.id);
    }
    await eventually(async () => {
      const read = await readPause(pause.id);
      expect(read.notifications.map((n: { status: string }) => n.status)).toEqual(['sent', 'sent']);
      expect(read.notifications[0].sent_at).toMatch(/Z$/);
    });
  });

  it('a link from the email preselects the option but answers nothing', async () => {
    const pause = await createPause(notifying.service.url, dev.live, { notify: { email: ['ops@example.com'] } });
    const [mail] = await smtp.waitForMails(1);
    const link = (mail!.parsed.text ?? '').match(/- approve: (\S+)/)?.[1] ?? '';
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You picked <strong>approve</strong>');
    expect((await readPause(pause.id)).status).toBe('pending');
  });

  it('retries a refusing SMTP server, then marks the notification failed', async () => {
    smtp.refuse(2);
    const recovered = await createPause(notifying.service.url, dev.live, { notify: { email: ['later@example.com'] } });
    await smtp.waitForMails(1, 5000);
    await eventually(async () => {
      const [notification] = (await readPause(recovered.id)).notifications;
      expect(notification).toMatchObject({ status: 'sent', attempts: 3, last_error: null });
    });

    smtp.refuseAll();
    const doomed = await createPause(notifying.service.url, dev.live, { notify: { email: ['never@example.com'] } });
    await eventually(async () => {
      const [notification] = (await readPause(doomed.id)).notifications;
      expect(notification).toMatchObject({ status: 'failed', attempts: 4, sent_at: null });
      expect(notification.last_error).toMatch(/451|temporarily unavailable/i);
    }, 6000);
    expect(
      notifying.service.logs.some(
        (line) => line.includes('notification failed after its last retry') && line.includes(doomed.id),
      ),
    ).toBe(true);
  });

  it('refuses a live email notification when the server has no SMTP', async () => {
    const bare = await startTestService();
    try {
      const other = await registerAccount(bare.url);
      const reply = await call(bare.url, 'POST', '/v1/pause', {
        token: other.live,
        body: { title: 't', notify: { email: ['ops@example.com'] } },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('channel_unavailable');
      // A test pause records it as suppressed all the same.
      const test = await call(bare.url, 'POST', '/v1/pause', {
        token: other.test,
        body: { title: 't', notify: { email: ['ops@example.com'] } },
      });
      expect(test.status).toBe(201);
      expect(test.body.notifications[0]).toMatchObject({ channel: 'email', status: 'suppressed' });
    } finally {
      await bare.destroy();
    }
  });
});

describe('test mode', () => {
  it('sends nothing and keeps the rendered message for the developer to read', async () => {
    const slack = notifying.receiver;
    const pause = await createPause(notifying.service.url, dev.test, {
      title: 'Refund €420?',
      metadata: { order: 'META-ORDER-1' },
      notify: { email: ['ops@example.com'], slack_webhook_url: `${slack.url}/services/T000/B000/XXXX` },
    });
    expect(pause.notifications.map((n: { status: string }) => n.status)).toEqual(['suppressed', 'suppressed']);
    await sleep(500);
    expect(smtp.mails).toHaveLength(0);
    expect(slack.requests).toHaveLength(0);

    const email = pause.notifications.find((n: { channel: string }) => n.channel === 'email');
    const rendered = await call(notifying.service.url, 'GET', `/v1/pause/${pause.id}/notifications/${email.id}`, {
      token: dev.test,
    });
    expect(rendered.status).toBe(200);
    expect(rendered.body).toMatchObject({
      object: 'notification',
      channel: 'email',
      status: 'suppressed',
      subject: 'Decision needed: Refund €420?',
    });
    expect(rendered.body.text).toContain(`${pause.response_url}?choice=approve`);
    expect(rendered.body.html).toContain('Refund €420?');
    expect(JSON.stringify(rendered.body)).not.toContain('META-ORDER-1');

    const slackNote = pause.notifications.find((n: { channel: string }) => n.channel === 'slack');
    expect(slackNote.to).not.toContain('XXXX'); // the credential part of the URL is never shown
    const slackRendered = await call(
      notifying.service.url,
      'GET',
      `/v1/pause/${pause.id}/notifications/${slackNote.id}`,
      {
        token: dev.test,
      },
    );
    expect(JSON.parse(slackRendered.body.text).text).toBe('Decision needed: Refund €420?');
    expect(
      (await call(notifying.service.url, 'GET', `/v1/pause/${pause.id}/notifications/${email.id}`, { token: dev.live }))
        .status,
    ).toBe(404);
    expect(
      (await call(notifying.service.url, 'GET', `/v1/pause/${pause.id}/notifications/ntf_nope`, { token: dev.test }))
        .status,
    ).toBe(404);
  });
});

describe('Slack', () => {
  it('posts the question with a button to the response page through the safe client', async () => {
    const slack = notifying.receiver;
    const pause = await createPause(notifying.service.url, dev.live, {
      title: 'Ship <it> & more?',
      notify: { slack_webhook_url: `${slack.url}/services/T000/B000/XXXX` },
    });
    const [request] = await slack.waitForRequests(1, 5000);
    expect(request!.path).toBe('/services/T000/B000/XXXX');
    expect(request!.headers['content-type']).toBe('application/json');
    const message = JSON.parse(request!.body.toString());
    expect(message.text).toBe('Decision needed: Ship &lt;it&gt; &amp; more?');
    const button = message.blocks.find((b: { type: string }) => b.type === 'actions').elements[0];
    expect(button.url).toBe(pause.response_url);
    await eventually(async () => expect((await readPause(pause.id)).notifications[0].status).toBe('sent'));
  });

  it.each([
    ['http://hooks.example.com/x'],
    ['https://10.0.0.1/services/x'],
    ['https://[::1]/services/x'],
    ['not a url'],
  ])('refuses %s as a Slack URL with 400 naming the field', async (url) => {
    const reply = await call(notifying.service.url, 'POST', '/v1/pause', {
      token: dev.test,
      body: { title: 't', notify: { slack_webhook_url: url } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details.fields[0].field).toBe('notify.slack_webhook_url');
    // `pausepoint listen` forwards webhook events, not Slack messages.
    expect(reply.body.error.message).not.toContain('pausepoint listen');
  });
});
