import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

// A real SMTP server on 127.0.0.1 for the tests. It records each message as
// delivered (envelope and parsed content) and can refuse messages on request.
// With `tls`, it offers STARTTLS with that certificate (the throw-away test
// CA's, from https-receiver.ts, which the service does not trust unless told).

export interface ReceivedMail {
  from: string;
  to: string[];
  /** Whether the message came over TLS (after STARTTLS). */
  secure: boolean;
  parsed: ParsedMail;
  raw: string;
}

export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  /** Refuse the next `count` messages with a 451 (temporary) error. */
  refuse(count: number): void;
  /** Refuse every message from now on. */
  refuseAll(): void;
  accept(): void;
  waitForMails(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpReceiver(options: { tls?: { key: string; cert: string } } = {}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  let refusals = 0;
  let refuseEverything = false;
  const server = new SMTPServer({
    authOptional: true,
    ...(options.tls
      ? { secure: false, key: options.tls.key, cert: options.tls.cert }
      : { disabledCommands: ['STARTTLS'] }),
    logger: false,
    // Any user and password will do (over TLS; smtp-server refuses AUTH in plain text).
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        if (refuseEverything || refusals > 0) {
          refusals = Math.max(0, refusals - 1);
          const error = Object.assign(new Error('Mailbox temporarily unavailable'), { responseCode: 451 });
          return callback(error);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          parsed: await simpleParser(raw),
          raw,
        });
        callback();
      });
    },
  });
  // A client that dies mid-message (a service killed with SIGKILL) resets the
  // connection, which smtp-server reports as a server 'error'. The message was
  // not accepted, so the client will send it again; nothing to fail here.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    refuse: (count) => {
      refusals = count;
    },
    refuseAll: () => {
      refuseEverything = true;
    },
    accept: () => {
      refuseEverything = false;
      refusals = 0;
    },
    async waitForMails(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (mails.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} mails, got ${mails.length}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return mails.slice(0, count);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
