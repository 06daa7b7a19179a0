import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What one request may cost the service: no body, with or without a key, may
// hold the event loop for long (docs/errors.md). A ~940 KiB body of 480,000
// JSON values is refused at once, an unmatched route never reads its body,
// and register/login count a client address before looking at the body.

/** `{"email":…,"password":…,"x":[0,0,…]}`: 480,000 values in ~940 KiB, under the 1 MiB limit. */
const MANY_VALUES = Buffer.from(
  `{"email":"a@b.co","password":"xxxxxxxxxx","x":[${Array.from({ length: 480_000 }, () => '0').join(',')}]}`,
);

const json = { 'content-type': 'application/json' };

function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)] ?? Number.NaN;
}

describe('the cost of one request', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.destroy());

  it('refuses a body of more than 20,000 JSON values with 400, on any endpoint that takes a body', async () => {
    expect(MANY_VALUES.length).toBeGreaterThan(900 * 1024);
    expect(MANY_VALUES.length).toBeLessThan(1024 * 1024);
    for (const path of ['/v1/auth/login', '/v1/auth/register', '/v1/respond/made-up-token']) {
      const reply = await call(service.url, 'POST', path, { rawBody: MANY_VALUES, headers: json });
      expect(reply.status, `${path}: ${reply.text}`).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
      expect(reply.body.error.message).toContain('20000');
    }
  });

  it('accepts a body of up to 20,000 values, counting arrays, objects and every member', async () => {
    // Register refuses the unknown field `x`, which means the body was read whole.
    const within = `{"email":"a@b.co","password":"xxxxxxxxxx","x":[${Array(19_990).fill('"a,b"').join(',')}]}`;
    const reply = await call(service.url, 'POST', '/v1/auth/register', { rawBody: within, headers: json });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.error.message).toContain('x');
    expect(reply.body.error.message).not.toContain('20000');
    // Commas and brackets inside strings are text, not values.
    const text = `{"email":"a@b.co","password":"${'[,{'.repeat(40)}"}`;
    const long = await call(service.url, 'POST', '/v1/auth/login', {
      rawBody: text.replace('"}', `","x":"${'[,'.repeat(30_000)}"}`),
      headers: json,
    });
    expect(long.status).toBe(400);
    expect(long.body.error.message).not.toContain('20000');
    const over = `{"x":[${Array(20_001).fill('[]').join(',')}]}`;
    const refused = await call(service.url, 'POST', '/v1/auth/login', { rawBody: over, headers: json });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('20000');
  });

  it('answers an unmatched route with 404 without reading its body', async () => {
    for (const [path, type] of [
      ['/nope', 'application/json'],
      ['/health', 'application/json'],
      ['/v1/nope', 'text/plain'],
    ] as const) {
      const reply = await call(service.url, 'POST', path, { rawBody: '{not json', headers: { 'content-type': type } });
      expect(reply.status, `${path}: ${reply.text}`).toBe(404);
      expect(reply.body.error.code).toBe('not_found');
    }
    const big = await call(service.url, 'POST', '/nope', { rawBody: MANY_VALUES, headers: json });
    expect(big.status).toBe(404);
  });

  it('keeps /health under 50 ms (p99) while four clients send such bodies', async () => {
    const targets = ['/v1/auth/login', '/v1/auth/register', '/v1/respond/made-up-token', '/nope'].map(
      (path) => `${service.url}${path}`,
    );
    const sending = { bodiesEach: 12, forMs: 10_000, pauseMs: 50 };

    // The rule without a clock first: the CPU time the service (in this
    // process) spends on one such body. It spent 450 ms and more when every
    // value was walked; no single request can hold the event loop longer
    // than all its work takes.
    // A loaded machine inflates CPU time too (shared caches, frequency); a
    // service that walks every value is over the bound in every try, so the
    // best of three tries is the figure.
    await sendFromAnotherProcess(targets, { ...sending, bodiesEach: 1 }); // compiles the code paths
    const cpuTries: number[] = [];
    for (let attempt = 0; attempt < 3 && !(Math.min(...cpuTries) < 20); attempt++) {
      const cpuBefore = process.cpuUsage();
      const statuses = await sendFromAnotherProcess(targets, sending);
      const cpu = process.cpuUsage(cpuBefore);
      expect(new Set(statuses)).toEqual(new Set([400, 404]));
      cpuTries.push((cpu.user + cpu.system) / 1000 / statuses.length);
    }
    const cpuMsPerBody = Math.min(...cpuTries);
    expect(cpuMsPerBody, JSON.stringify(cpuTries)).toBeLessThan(20);

    /**
     * /health asked over and over while the four senders (in another process)
     * send their bodies: first to a server of their own that only reads them
     * (what the load of sending alone does to /health on this machine now),
     * then to the service.
     */
    async function round() {
      const control = await probeHealth(service.url, sendFromAnotherProcess(targets, { ...sending, toSink: true }));
      const busy = await probeHealth(service.url, sendFromAnotherProcess(targets, sending));
      return {
        controlP99: Math.round(percentile(control, 0.99)),
        p99: Math.round(percentile(busy, 0.99)),
        samples: busy.length,
      };
    }

    // The bound is 50 ms, raised on a loaded machine by as much as sending
    // to another server slows /health. Other processes can stall this one
    // now and then; a service that blocks on such bodies is slow in every
    // round, so one good round of four is enough.
    const allowedMs = (r: { controlP99: number }) => Math.max(50, r.controlP99 + 25);
    const rounds = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const result = await round();
      rounds.push(result);
      if (result.p99 < allowedMs(result)) break;
    }
    const what = JSON.stringify({ cpuMsPerBody, rounds });
    const best = rounds.reduce((a, b) => (b.p99 - allowedMs(b) < a.p99 - allowedMs(a) ? b : a));
    expect(best.samples, what).toBeGreaterThanOrEqual(10);
    expect(best.p99, what).toBeLessThan(allowedMs(best));
  }, 150_000);
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** GET /health one after the other until `until` settles; their latencies in ms. */
async function probeHealth(baseUrl: string, until: Promise<unknown>): Promise<number[]> {
  let running = true;
  const stop = until.finally(() => {
    running = false;
  });
  const latencies: number[] = [];
  while (running) {
    const before = performance.now();
    const response = await fetch(`${baseUrl}/health`);
    await response.arrayBuffer();
    latencies.push(performance.now() - before);
    expect(response.status).toBe(200);
    await sleep(5);
  }
  await stop;
  return latencies;
}

/**
 * POSTs MANY_VALUES `bodiesEach` times to each URL (or for as long as `forMs`
 * allows), `pauseMs` apart, one sender per URL, from a child process so that
 * sending costs the service's process nothing; resolves with the statuses.
 * With `toSink`, the same bodies go to a server in that process that only
 * reads them.
 */
function sendFromAnotherProcess(
  urls: string[],
  options: { bodiesEach: number; forMs: number; pauseMs: number; toSink?: boolean },
): Promise<number[]> {
  const source = `
    const http = require('node:http');
    const { urls, bodiesEach, forMs, pauseMs, toSink } = JSON.parse(process.argv[1]);
    const body = Buffer.from('{"email":"a@b.co","password":"xxxxxxxxxx","x":[' + Array(480000).fill('0').join(',') + ']}');
    const agent = new http.Agent({ keepAlive: true });
    const post = (url) => new Promise((resolve, reject) => {
      const request = http.request(url, {
        method: 'POST', agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      }, (response) => { response.resume(); response.on('end', () => resolve(response.statusCode)); });
      request.on('error', reject);
      request.end(body);
    });
    const sink = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(404).end('{}'));
    });
    sink.listen(0, '127.0.0.1', async () => {
      const targets = toSink ? urls.map(() => 'http://127.0.0.1:' + sink.address().port + '/') : urls;
      const startedAt = Date.now();
      const statuses = [];
      await Promise.all(targets.map(async (url) => {
        for (let i = 0; i < bodiesEach && Date.now() - startedAt < forMs; i++) {
          statuses.push(await post(url));
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      }));
      agent.destroy();
      sink.close();
      process.stdout.write(JSON.stringify(statuses));
    });
  `;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', source, JSON.stringify({ urls, ...options })],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

describe('register and login limits come before the body is read', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { AUTH_RATE_LIMIT: '3/60' } });
  });
  afterAll(() => service?.destroy());

  it('answers 429 to a client over its limit, whatever its body', async () => {
    for (const path of ['/v1/auth/login', '/v1/auth/register']) {
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await call(service.url, 'POST', path, { rawBody: '{"email":1}', headers: json })).status);
      }
      expect(statuses).toEqual([400, 400, 400]);
      for (const body of ['{"email":1}', MANY_VALUES, '{not json']) {
        const reply = await call(service.url, 'POST', path, { rawBody: body, headers: json });
        expect(reply.status, `${path}: ${reply.text}`).toBe(429);
        expect(reply.body.error.code).toBe('rate_limited');
        expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
      }
    }
  });
});
