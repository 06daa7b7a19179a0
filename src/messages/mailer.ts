import type { Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { RenderedEmail } from './render.js';

// Email through the operator's SMTP server (SMTP_URL). Each recipient gets a
// message of their own. The SMTP server is the operator's own configuration,
// not user input, so it does not go through the public-address guard.

export interface Mailer {
  send(
    to: string,
    email: RenderedEmail,
  ): Promise<{ ok: true } | { ok: false; statusCode: number | null; error: string }>;
  close(): void;
}

export function createMailer(config: Pick<Config, 'smtpUrl' | 'emailFrom'>): Mailer | undefined {
  if (!config.smtpUrl || !config.emailFrom) return undefined;
  const smtpUrl = config.smtpUrl;
  // The mail library is loaded with the first message, not at start-up.
  let transport: Promise<Transporter> | undefined;
  const connect = () => {
    transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url: smtpUrl,
        connectionTimeout: 5000,
        greetingTimeout: 5000,
        socketTimeout: 10_000,
      } as Parameters<typeof nodemailer.createTransport>[0]),
    );
    return transport;
  };
  const from = config.emailFrom;
  return {
    async send(to, email) {
      try {
        await (await connect()).sendMail({ from, to, subject: email.subject, text: email.text, html: email.html });
        return { ok: true };
      } catch (error) {
        const smtp = error as { responseCode?: number; message?: string };
        // The server's words, without anything that could hold the SMTP password.
        const message = (smtp.message ?? 'SMTP error').replace(/\/\/[^@\s]*@/g, '//').slice(0, 300);
        return { ok: false, statusCode: smtp.responseCode ?? null, error: message };
      }
    },
    close: () => void transport?.then((open) => open.close()),
  };
}
