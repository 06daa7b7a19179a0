import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerAccount } from '../../helpers/http.js';
import { createPause, sleep } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Slow-loris: a client that trickles its headers or its body must lose the
// connection instead of holding it. The limits are shortened here (1 s for
// headers, 2 s for the whole request); a long-poll, whose request arrived
// whole, must not be cut by them. What Node's HTTP parser refuses (a slow
// client, oversized headers, garbage) gets the API's usual error body.

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' } });
});
afterAll(() => service?.destroy());

/** Opens a raw connection and reports what the server sent and when it closed. */
function rawConnection(): Promise<{ socket: Socket; closed: Promise<{ afterMs: number; received: string }> }> {
  const { port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      const openedAt = Date.now();
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString();
      });
      const closed = new Promise<{ afterMs: number; received: string }>((done) =>
        socket.on('close', () => done({ afterMs: Date.now() - openedAt, received })),
      );
      resolve({ socket, closed });
    });
    socket.on('error', reject);
  });
}

/** A raw HTTP reply with our error body and headers, and the connection closed after it. */
function expectErrorReply(raw: string, status: number, code: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(head).toMatch(/\r\nconnection: close/i);
  expect(head).toMatch(/\r\ncontent-type: application\/json/i);
  const requestId = /\r\nx-request-id: (req_[0-9a-f]{24})/i.exec(head)?.[1];
  expect(JSON.parse(body)).toEqual({ error: { code, message: expect.any(String), request_id: requestId } });
}

/** Writes `parts` one every `everyMs` while the socket stays open. */
async function trickle(socket: Socket, parts: string[], everyMs: number) {
  for (const part of parts) {
    if (socket.destroyed || socket.writableEnded) return;
    socket.write(part);
    await sleep(everyMs);
  }
}

describe('slow clients', () => {
  it('cuts a client that never finishes its headers', async () => {
    const { socket, closed } = await rawConnection();
    const headerLines = Array.from({ length: 40 }, (_, i) => `x-slow-${i}: 1\r\n`);
    void trickle(socket, ['GET /health HTTP/1.1\r\nhost: localhost\r\n', ...headerLines], 200);
    const { afterMs, received } = await closed;
    expectErrorReply(received, 408, 'request_timeout');
    expect(afterMs).toBeLessThan(5000); // 1 s limit, checked every second; the trickle would take 8 s
  });

  it('cuts a client that trickles its body', async () => {
    const account = await registerAccount(service.url);
    const body = JSON.stringify({ title: 'slow body', body: 'x'.repeat(40) });
    const { socket, closed } = await rawConnection();
    const head =
      'POST /v1/pause HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n' +
      `authorization: Bearer ${account.test}\r\ncontent-length: ${body.length}\r\n\r\n`;
    void trickle(socket, [head, ...body], 200);
    const { afterMs, received } = await closed;
    expectErrorReply(received, 408, 'request_timeout');
    expect(afterMs).toBeLessThan(6000); // 2 s limit; the trickle would take 12 s
    const list = await call(service.url, 'GET', '/v1/pause', { token: account.test });
    expect(list.body.data).toEqual([]); // nothing was created from the half body
  });

  it('answers headers over 16 KiB with 431 headers_too_large', async () => {
    const { socket, closed } = await rawConnection();
    socket.write(`GET /health HTTP/1.1\r\nhost: localhost\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectErrorReply((await closed).received, 431, 'headers_too_large');
  });

  it('answers a request that is not HTTP with 400 invalid_request', async () => {
    const { socket, closed } = await rawConnection();
    socket.write('HELLO THERE\r\n\r\n');
    expectErrorReply((await closed).received, 400, 'invalid_request');
  });

  it('lets a long-poll wait longer than the request limit', async () => {
    const account = await registerAccount(service.url);
    const pause = await createPause(service.url, account.test, { title: 'waiting' });
    const startedAt = Date.now();
    const reply = await call(service.url, 'GET', `/v1/pause/${pause.id}?wait=4`, { token: account.test });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe('pending');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(3900);
  });
});
