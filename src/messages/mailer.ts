import type { Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { RenderedEmail } from './render.js';

// Email through the operator's SMTP server (SMTP_URL). Each recipient gets a
// message of their own. The SMTP server is the operator's own configuration,
// not user input, so it does not go through the public-address guard. TLS
// trusts Node's store plus NODE_EXTRA_CA_CERTS, as every outbound connection.

export interface Mailer {
  send(
    to: string,
    email: RenderedEmail,
  ): Promise<{ ok: true } | { ok: false; statusCode: number | null; error: string }>;
  close(): void;
}

/** host:port of the SMTP server, with nodemailer's default ports; never the user or password. */
export function smtpServerOf(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  return `${url.hostname}:${url.port || (secure ? 465 : 587)}`;
}

// Node's messages for a failed TLS handshake, which nodemailer reports as a
// plain socket error ("ESOCKET" on "CONN") whether it failed at STARTTLS or not.
const TLS_FAILURE = /certificate|self[- ]signed|\bSSL|\bTLS|handshake|wrong version number|alert/i;
const UNTRUSTED = /unable to (verify|get)|self[- ]signed|expired|not yet valid|does not match certificate/i;

/** What a failed send says: which server, at which step, and the underlying reason; no credentials. */
export function describeSmtpError(smtpUrl: string, error: { message?: string; command?: string }): string {
  const reason = (error.message ?? 'SMTP error').replace(/\/\/[^@\s]*@/g, '//');
  const secure = new URL(smtpUrl).protocol === 'smtps:';
  let step = '';
  if (error.command === 'CONN' && TLS_FAILURE.test(reason)) {
    step = secure ? 'TLS handshake failed: ' : 'TLS handshake after STARTTLS failed: ';
  } else if (error.command === 'CONN') {
    step = 'connection failed: ';
  }
  const hint = step && UNTRUSTED.test(reason) ? ' (a private CA? see NODE_EXTRA_CA_CERTS and SMTP_TLS)' : '';
  return `SMTP server ${smtpServerOf(smtpUrl)}: ${step}${reason}${hint}`.slice(0, 300);
}

export function createMailer(config: Pick<Config, 'smtpUrl' | 'smtpTls' | 'emailFrom'>): Mailer | undefined {
  if (!config.smtpUrl || !config.emailFrom) return undefined;
  const smtpUrl = config.smtpUrl;
  // The mail library is loaded with the first message, not at start-up.
  let transport: Promise<Transporter> | undefined;
  const connect = () => {
    transport ??= Promise.all([import('nodemailer'), import('nodemailer/lib/shared/index.js')]).then(
      ([{ default: nodemailer }, shared]) =>
        // Options beside `url` would be dropped by createTransport, so the URL
        // is parsed here and the timeouts (and SMTP_TLS) laid over it.
        nodemailer.createTransport({
          ...shared.parseConnectionUrl(smtpUrl),
          connectionTimeout: 5000,
          greetingTimeout: 5000,
          socketTimeout: 10_000,
          ...(config.smtpTls === 'off' ? { ignoreTLS: true } : {}),
        }),
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
        const smtp = error as { responseCode?: number; message?: string; command?: string };
        return { ok: false, statusCode: smtp.responseCode ?? null, error: describeSmtpError(smtpUrl, smtp) };
      }
    },
    close: () => void transport?.then((open) => open.close()),
  };
}
