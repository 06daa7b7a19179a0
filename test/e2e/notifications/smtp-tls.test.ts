import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/database.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { type TestCertificates, testCertificates } from '../../helpers/https-receiver.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { killAllServices, newSecretKey, spawnService } from '../../helpers/process.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// Email to an SMTP server that offers STARTTLS with a certificate of a private
// CA (the throw-away test CA): the failure names the server and the handshake;
// the operator either trusts the CA (NODE_EXTRA_CA_CERTS) or, for a server on
// loopback, turns TLS off (SMTP_TLS=off).

const PASSWORD = 'SMTP-PA55WORD-XYZ';
const EMAIL_FROM = 'pausepoint <approvals@example.com>';

let certificates: TestCertificates;
let smtp: SmtpReceiver;
let port: string;

beforeAll(async () => {
  certificates = await testCertificates();
  smtp = await startSmtpReceiver({ tls: certificates });
  port = new URL(smtp.url).port;
});
afterAll(async () => {
  await smtp?.close();
});
afterEach(async () => {
  smtp.mails.length = 0;
  await killAllServices();
});

async function inProcess(env: Record<string, string>): Promise<{ service: TestService; dev: Account }> {
  const service = await startTestService({
    env: { EMAIL_FROM, WEBHOOK_RETRY_SCHEDULE_MS: '50,50,50', ...env },
  });
  return { service, dev: await registerAccount(service.url) };
}

const notificationOf = async (baseUrl: string, key: string, pauseId: string) =>
  (await call(baseUrl, 'GET', `/v1/pause/${pauseId}`, { token: key })).body.notifications[0];

describe('an SMTP server whose certificate is not trusted', () => {
  it('fails the notification with the server, the STARTTLS handshake and the reason, never the password', async () => {
    const { service, dev } = await inProcess({ SMTP_URL: `smtp://mailer:${PASSWORD}@127.0.0.1:${port}` });
    try {
      const pause = await createPause(service.url, dev.live, { notify: { email: ['ops@example.com'] } });
      let error = '';
      await eventually(async () => {
        const notification = await notificationOf(service.url, dev.live, pause.id);
        expect(notification.status).toBe('failed');
        error = notification.last_error;
      }, 10_000);
      expect(error).toContain(`127.0.0.1:${port}`);
      expect(error).toMatch(/STARTTLS/);
      expect(error).toMatch(/TLS handshake/);
      expect(error).toMatch(/unable to verify the first certificate/);
      expect(error).not.toContain(PASSWORD);
      expect(smtp.mails).toHaveLength(0);
      const logged = service.logs.filter((line) => line.includes(pause.id)).join('\n');
      expect(logged).toContain(`127.0.0.1:${port}`);
      expect(service.logs.join('\n')).not.toContain(PASSWORD);
    } finally {
      await service.destroy();
    }
  });
});

describe('pointing pausepoint at a local SMTP server', () => {
  it('sends over STARTTLS once the CA is trusted through NODE_EXTRA_CA_CERTS', async () => {
    const database = await freshDatabase();
    try {
      const child = await spawnService({
        databaseUrl: database.url,
        secretKey: newSecretKey(),
        caFile: certificates.caFile,
        env: { SMTP_URL: `smtp://mailer:${PASSWORD}@127.0.0.1:${port}`, EMAIL_FROM },
      });
      const dev = await registerAccount(child.url!);
      const pause = await createPause(child.url!, dev.live, { notify: { email: ['ops@example.com'] } });
      const [mail] = await smtp.waitForMails(1, 20_000).catch((error) => {
        throw new Error(`${error.message}\n${child.lines.map((l) => l.line).join('\n')}`);
      });
      expect(mail).toMatchObject({ to: ['ops@example.com'], secure: true });
      await eventually(async () => {
        expect(await notificationOf(child.url!, dev.live, pause.id)).toMatchObject({ status: 'sent' });
      });
    } finally {
      await killAllServices();
      await database.drop();
    }
  }, 60_000);

  it('with SMTP_TLS=off sends in plain text to a server on loopback', async () => {
    const { service, dev } = await inProcess({ SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_TLS: 'off' });
    try {
      const pause = await createPause(service.url, dev.live, { notify: { email: ['ops@example.com'] } });
      const [mail] = await smtp.waitForMails(1);
      expect(mail).toMatchObject({ to: ['ops@example.com'], secure: false });
      await eventually(async () => {
        expect(await notificationOf(service.url, dev.live, pause.id)).toMatchObject({ status: 'sent' });
      });
    } finally {
      await service.destroy();
    }
  });
});
