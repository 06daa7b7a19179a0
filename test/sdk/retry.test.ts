import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Pausepoint, PausepointConnectionError, PausepointError } from '../../sdk/src/index.js';
import { type Account, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// Retries, through a flaky local proxy in front of a real service: it fails
// the next requests as scripted (a 503, a 429, a dropped connection, or the
// request forwarded and its answer lost), then forwards faithfully.

type Fault = '503' | '429' | 'drop' | 'lose-answer';

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  at: number;
}

interface FlakyProxy {
  url: string;
  seen: SeenRequest[];
  fail(...faults: Fault[]): void;
  reset(): void;
  close(): Promise<void>;
}

async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const faults: Fault[] = [];
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: Date.now() });
    const fault = faults.shift();
    if (fault === '503' || fault === '429') {
      const status = Number(fault);
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_proxy', 'retry-after': '1' });
      res.end(JSON.stringify({ error: { code: 'flaky', message: `proxy says ${status}`, request_id: 'req_proxy' } }));
      return;
    }
    if (fault === 'drop') {
      req.socket.destroy();
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'idempotency-key', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (fault === 'lose-answer') {
      // The service did the work; the client never hears of it.
      req.socket.destroy();
      return;
    }
    const answerHeaders: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection')
        answerHeaders[name] = value;
    });
    res.writeHead(upstream.status, answerHeaders);
    res.end(body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    fail: (...next) => void faults.push(...next),
    reset: () => {
      faults.length = 0;
      seen.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

let service: TestService;
let proxy: FlakyProxy;
let dev: Account;
let client: Pausepoint;
let direct: Pausepoint;

beforeAll(async () => {
  service = await startTestService({ env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } });
  proxy = await startFlakyProxy(service.url);
  dev = await registerAccount(service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: proxy.url, maxRetries: 3 });
  direct = new Pausepoint({ apiKey: dev.test, baseUrl: service.url });
});
afterAll(async () => {
  await proxy?.close();
  await service?.destroy();
});
beforeEach(() => proxy.reset());

describe('retries of idempotent requests', () => {
  it('retries a read on 503s, with growing gaps, until it gets through', async () => {
    const pause = await direct.pauses.create({ title: 'Read me?' });
    proxy.fail('503', '503');
    expect((await client.pauses.get(pause.id)).id).toBe(pause.id);
    expect(proxy.seen.map((request) => request.method)).toEqual(['GET', 'GET', 'GET']);
    // Retry-After: 1 is honoured.
    expect(proxy.seen[1]!.at - proxy.seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('retries a read after a dropped connection', async () => {
    const pause = await direct.pauses.create({ title: 'Dropped?' });
    proxy.fail('drop', 'drop');
    expect((await client.pauses.get(pause.id)).id).toBe(pause.id);
    expect(proxy.seen).toHaveLength(3);
  });

  it('retries list pages', async () => {
    proxy.fail('503', 'drop');
    const pauses = await client.pauses.list({ limit: 100 }).toArray();
    expect(pauses.length).toBeGreaterThan(0);
    expect(proxy.seen).toHaveLength(3);
  });

  it('gives up after maxRetries with the last error, typed', async () => {
    const pause = await direct.pauses.create({ title: 'Never?' });
    const once = new Pausepoint({ apiKey: dev.test, baseUrl: proxy.url, maxRetries: 1 });
    proxy.fail('503', '503', '503');
    const error = await once.pauses.get(pause.id).catch((e) => e);
    expect(error).toBeInstanceOf(PausepointError);
    expect(error).toMatchObject({ status: 503, code: 'flaky', requestId: 'req_proxy' });
    expect(proxy.seen).toHaveLength(2);

    proxy.reset();
    proxy.fail('drop', 'drop');
    const dropped = await once.pauses.get(pause.id).catch((e) => e);
    expect(dropped).toBeInstanceOf(PausepointConnectionError);
    expect(dropped.code).toBe('connection_error');
  });

  it('retries a create with the same generated idempotency key: one pause, even when the answer was lost', async () => {
    const own = await registerAccount(service.url);
    const viaProxy = new Pausepoint({ apiKey: own.test, baseUrl: proxy.url, maxRetries: 3 });
    proxy.fail('lose-answer', '503');
    const pause = await viaProxy.pauses.create({ title: 'Exactly once?' });
    expect(proxy.seen.map((request) => request.method)).toEqual(['POST', 'POST', 'POST']);
    const keys = proxy.seen.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    const all = await new Pausepoint({ apiKey: own.test, baseUrl: service.url }).pauses.list().toArray();
    expect(all.map((p) => p.id)).toEqual([pause.id]);
  });

  it('keeps a caller’s idempotency key across retries', async () => {
    proxy.fail('drop');
    await client.pauses.create({ title: 'My key?' }, { idempotencyKey: 'my-key-1' });
    expect(proxy.seen.map((request) => request.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1']);
  });

  it('retries a cancel whose answer was lost, and returns the cancelled pause', async () => {
    const pause = await direct.pauses.create({ title: 'Cancel once?' });
    proxy.fail('lose-answer');
    const cancelled = await client.pauses.cancel(pause.id);
    expect(cancelled).toMatchObject({ id: pause.id, status: 'cancelled' });
    expect(proxy.seen.map((request) => request.method)).toEqual(['DELETE', 'DELETE', 'GET']);
    // Without a lost answer, cancelling an ended pause is still an error.
    await expect(client.pauses.cancel(pause.id)).rejects.toMatchObject({ status: 409, code: 'pause_not_pending' });
  });

  it('retries a webhook delete whose answer was lost', async () => {
    const webhook = await direct.webhooks.create({
      url: 'https://127.0.0.1:9/hook',
      events: ['pause.responded'],
      secret: 'whsec_0123456789abcdef',
    });
    proxy.fail('lose-answer');
    expect(await client.webhooks.delete(webhook.id)).toEqual({ id: webhook.id, object: 'webhook', deleted: true });
    expect(await direct.webhooks.list().toArray()).toEqual([]);
  });
});

describe('requests that are not idempotent', () => {
  it('are not retried on a 5xx or a network error', async () => {
    proxy.fail('503');
    const secret = 'whsec_0123456789abcdef';
    const error = await client.webhooks
      .create({ url: 'https://127.0.0.1:9/a', events: ['pause.responded'], secret })
      .catch((e) => e);
    expect(error).toMatchObject({ status: 503 });
    expect(proxy.seen).toHaveLength(1);

    proxy.reset();
    proxy.fail('drop');
    const dropped = await client.webhooks
      .create({ url: 'https://127.0.0.1:9/b', events: ['pause.responded'], secret })
      .catch((e) => e);
    expect(dropped).toBeInstanceOf(PausepointConnectionError);
    expect(proxy.seen).toHaveLength(1);
    expect(await direct.webhooks.list().toArray()).toEqual([]);
  });

  it('are retried on a 429, which the service answers before doing anything', async () => {
    proxy.fail('429');
    const webhook = await client.webhooks.create({
      url: 'https://127.0.0.1:9/c',
      events: ['pause.responded'],
      secret: 'whsec_0123456789abcdef',
    });
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[1]!.at - proxy.seen[0]!.at).toBeGreaterThanOrEqual(950);
    await direct.webhooks.delete(webhook.id);
  });
});

describe('timeouts', () => {
  it('times out a request that takes too long, and retries it', async () => {
    const pause = await direct.pauses.create({ title: 'Slow?' });
    const impatient = new Pausepoint({ apiKey: dev.test, baseUrl: service.url, timeoutMs: 300, maxRetries: 1 });
    const started = Date.now();
    // A long-poll of 1 s is given its wait on top of the timeout, so it succeeds…
    expect((await impatient.pauses.get(pause.id, { wait: 1 })).status).toBe('pending');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    // …but a plain request to a server that never answers times out, twice.
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const stuck = new Pausepoint({
        apiKey: dev.test,
        baseUrl: `http://127.0.0.1:${port}`,
        timeoutMs: 200,
        maxRetries: 1,
      });
      const error = await stuck.pauses.get(pause.id).catch((e) => e);
      expect(error).toBeInstanceOf(PausepointConnectionError);
      expect(error.code).toBe('timeout');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
