// A real HTTPS endpoint for tests of outbound delivery (webhooks, Slack).
//
// Certificates: a throw-away CA and a server certificate for 127.0.0.1, ::1 and
// localhost are made once per test process with the openssl CLI, in a private
// folder under os.tmpdir() that is removed as soon as they are read; nothing is
// written into the repository and no key stays on disk. The CA is exposed two ways:
//   - `ca` (PEM string): pass it to createSafeClient({ca}) in-process, because
//     Node reads NODE_EXTRA_CA_CERTS only when it starts;
//   - `caFile` (path): set NODE_EXTRA_CA_CERTS=<caFile> for a child process,
//     which is how production adds a CA too.
//
// Every request is recorded (method, path, headers, raw body, time) and each
// answer can be scripted: status, body, headers, delay, redirect, or never
// answering at all.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Date.now() when the whole body had arrived. */
  receivedAt: number;
}

export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  /** Default "ok". */
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up or the receiver closes). */
  hang?: boolean;
  /** Answer 302 with this Location (status overridable). */
  redirectTo?: string;
}

export type Responder = ScriptedResponse | ((request: ReceivedRequest) => ScriptedResponse);

export interface HttpsReceiver {
  /** https://127.0.0.1:<port> (no trailing slash). */
  url: string;
  port: number;
  /** The test CA certificate, PEM. */
  ca: string;
  /** Path of a file (under os.tmpdir(), written on first access) holding `ca`, for NODE_EXTRA_CA_CERTS in a child process. */
  readonly caFile: string;
  /** Every request received, in order. */
  readonly requests: ReceivedRequest[];
  /** How many TLS connections were established ('secureConnection' events). */
  readonly connections: number;
  /** Queue answers for the next requests, in order; once used up, the default answer applies. */
  respondWith(...responses: Responder[]): void;
  /** The answer given when nothing is queued (initially 200 "ok"). */
  setDefault(response: Responder): void;
  /**
   * Resolves once at least `count` requests (of those `where` picks, e.g. by
   * path, when the receiver is shared by tests whose retries may still
   * arrive) have arrived, with those requests.
   */
  waitForRequests(
    count: number,
    timeoutMs?: number,
    where?: (request: ReceivedRequest) => boolean,
  ): Promise<ReceivedRequest[]>;
  /** Forgets recorded requests, queued answers and the connection count. */
  reset(): void;
  close(): Promise<void>;
}

export interface TestCertificates {
  ca: string;
  readonly caFile: string;
  key: string;
  cert: string;
}

let certificates: Promise<TestCertificates> | undefined;

/** The throw-away CA and server certificate, made once per process. */
export function testCertificates(): Promise<TestCertificates> {
  certificates ??= makeCertificates();
  return certificates;
}

async function makeCertificates(): Promise<TestCertificates> {
  const dir = mkdtempSync(join(tmpdir(), 'pausepoint-test-ca-'));
  const file = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  let made: { ca: string; key: string; cert: string };
  try {
    await run('openssl', [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=pausepoint throw-away test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    await run('openssl', [
      'req',
      ...ec,
      '-keyout',
      file('server.key'),
      '-out',
      file('server.csr'),
      '-subj',
      '/CN=localhost',
    ]);
    writeFileSync(
      file('server.ext'),
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth',
        'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
        '',
      ].join('\n'),
    );
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file('server.pem'),
      '-days',
      '2',
      '-extfile',
      file('server.ext'),
    ]);
    made = {
      ca: readFileSync(file('ca.pem'), 'utf8'),
      key: readFileSync(file('server.key'), 'utf8'),
      cert: readFileSync(file('server.pem'), 'utf8'),
    };
  } catch (error) {
    throw new Error(`could not make test certificates with the openssl CLI: ${(error as Error).message}`);
  } finally {
    // Keys and certificates live in memory from here on.
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    ...made,
    get caFile() {
      return caFilePath(made.ca);
    },
  };
}

// The CA file handed to child processes: written on first use, removed when the
// last open receiver closes (or, failing that, when the process exits).
let caFile: string | undefined;
let openReceivers = 0;

function caFilePath(ca: string): string {
  if (caFile === undefined || !existsSync(caFile)) {
    const dir = mkdtempSync(join(tmpdir(), 'pausepoint-test-ca-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, ca);
  }
  return caFile;
}

function removeCaFile(): void {
  if (caFile === undefined) return;
  rmSync(dirname(caFile), { recursive: true, force: true });
  caFile = undefined;
}

export async function startHttpsReceiver(options: { defaultResponse?: Responder } = {}): Promise<HttpsReceiver> {
  const certs = await testCertificates();
  const requests: ReceivedRequest[] = [];
  const queue: Responder[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<(received: ReceivedRequest) => void>();
  let fallback: Responder = options.defaultResponse ?? {};
  let connections = 0;

  const server = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
      };
      requests.push(received);
      for (const wake of waiters) wake(received);

      const responder = queue.shift() ?? fallback;
      const answer = typeof responder === 'function' ? responder(received) : responder;
      if (answer.hang) return;
      const send = () => {
        if (res.destroyed) return;
        const headers: Record<string, string> = { ...answer.headers };
        if (answer.redirectTo !== undefined) headers.location = answer.redirectTo;
        res.writeHead(answer.status ?? (answer.redirectTo !== undefined ? 302 : 200), headers);
        res.end(answer.body ?? 'ok');
      };
      if (answer.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, answer.delayMs);
        timers.add(timer);
      } else {
        send();
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', () => {
    connections += 1;
  });
  // Failed handshakes (e.g. a client that does not trust the CA) are expected in tests.
  server.on('tlsClientError', () => {});

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  openReceivers += 1;
  let closed = false;

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    ca: certs.ca,
    get caFile() {
      return certs.caFile;
    },
    requests,
    get connections() {
      return connections;
    },
    respondWith(...responses) {
      queue.push(...responses);
    },
    setDefault(response) {
      fallback = response;
    },
    waitForRequests(count, timeoutMs = 10_000, where = () => true) {
      // Each arrival is tested once: a benchmark waits here for 10,000 of them.
      const picked = requests.filter(where);
      if (picked.length >= count) return Promise.resolve(picked);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} request(s) within ${timeoutMs} ms, got ${picked.length}`));
        }, timeoutMs);
        const check = (received: ReceivedRequest) => {
          if (!where(received)) return;
          picked.push(received);
          if (picked.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(picked);
        };
        waiters.add(check);
      });
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      connections = 0;
    },
    close() {
      if (!closed) {
        closed = true;
        openReceivers -= 1;
        if (openReceivers === 0) removeCaFile();
      }
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
