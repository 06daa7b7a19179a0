import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ipaddr from 'ipaddr.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Cidr } from '../../../src/config.js';
import {
  createSafeClient,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  type SafeClient,
  type SafeClientOptions,
} from '../../../src/net/safe-client.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/https-receiver.js';

// The SSRF-safe client against a real HTTPS receiver on 127.0.0.1, trusted
// through a throw-away CA passed in-process.

const loopback: Cidr[] = [ipaddr.parseCIDR('127.0.0.0/8')];
const json = { 'content-type': 'application/json' };

let receiver: HttpsReceiver;
const clients: SafeClient[] = [];

function client(options: Partial<SafeClientOptions> = {}): SafeClient {
  const made = createSafeClient({
    allowedNetworks: loopback,
    userAgent: 'pausepoint-test/1',
    ca: receiver.ca,
    ...options,
  });
  clients.push(made);
  return made;
}

beforeAll(async () => {
  receiver = await startHttpsReceiver();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  receiver.reset();
  receiver.setDefault({});
});

afterAll(async () => {
  await receiver.close();
});

describe('createSafeClient', () => {
  it('defaults to a 5 s deadline and a 4 KiB body cap', () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(5000);
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(4096);
  });

  it('POSTs the exact body and headers and returns a 2xx with status and body', async () => {
    receiver.respondWith({ status: 202, body: 'accepted' });
    const body = Buffer.from('{"event":"pause.responded","n":1}');
    const result = await client().post(`${receiver.url}/hooks/a?x=1`, body, {
      ...json,
      'X-Service-Event': 'pause.responded',
      'User-Agent': 'caller-should-not-win',
    });
    expect(result).toEqual({ ok: true, status: 202, body: 'accepted' });
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hooks/a?x=1');
    expect(request!.body.equals(body)).toBe(true);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-service-event']).toBe('pause.responded');
    expect(request!.headers['user-agent']).toBe('pausepoint-test/1');
  });

  it('reports a 500 as a failure with its status and the start of its body', async () => {
    receiver.respondWith({ status: 500, body: 'boom' });
    const result = await client().post(`${receiver.url}/`, '{}', json);
    expect(result).toEqual({ ok: false, status: 500, error: 'HTTP 500', body: 'boom' });
  });

  it('does not follow redirects', async () => {
    receiver.respondWith({ redirectTo: `${receiver.url}/elsewhere` });
    const result = await client().post(`${receiver.url}/start`, '{}', json);
    expect(result).toMatchObject({ ok: false, status: 302 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.requests.map((r) => r.path)).toEqual(['/start']);
  });

  it('gives up on a receiver that never answers when the deadline passes', async () => {
    receiver.respondWith({ hang: true });
    const started = Date.now();
    const result = await client({ timeoutMs: 500 }).post(`${receiver.url}/`, '{}', json);
    const elapsed = Date.now() - started;
    expect(result).toEqual({ ok: false, error: 'timed out after 500 ms' });
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2000);
  });

  it('counts a slow body against the same deadline', async () => {
    receiver.respondWith({ delayMs: 1500 });
    const result = await client({ timeoutMs: 300 }).post(`${receiver.url}/`, '{}', json);
    expect(result).toEqual({ ok: false, error: 'timed out after 300 ms' });
  });

  it('reads at most 4096 bytes of a large body', async () => {
    receiver.respondWith({ body: Buffer.alloc(1024 * 1024, 'x') });
    const result = await client().post(`${receiver.url}/`, '{}', json);
    expect(result.ok).toBe(true);
    if (result.ok) expect(Buffer.byteLength(result.body)).toBe(4096);
  });

  it('refuses 127.0.0.1 without WEBHOOK_ALLOWED_NETWORKS before any connection', async () => {
    const result = await client({ allowedNetworks: [] }).post(`${receiver.url}/`, '{}', json);
    expect(result).toEqual({ ok: false, error: 'address 127.0.0.1 is not public' });
    expect(receiver.connections).toBe(0);
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses private IP literals in any notation, without any look-up', async () => {
    const resolve = vi.fn(async () => ['1.1.1.1']);
    const safe = client({ allowedNetworks: [], resolve });
    for (const [host, address] of [
      ['10.0.0.1', '10.0.0.1'],
      ['0x7f000001', '127.0.0.1'],
      ['169.254.169.254', '169.254.169.254'],
      ['[::1]', '::1'],
      ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ]) {
      expect(await safe.post(`https://${host}:${receiver.port}/`, '{}', json)).toEqual({
        ok: false,
        error: `address ${address} is not public`,
      });
    }
    expect(resolve).not.toHaveBeenCalled();
    expect(receiver.connections).toBe(0);
  });

  it('refuses localhost at connect time when loopback is not allowed', async () => {
    const result = await client({ allowedNetworks: [] }).post(`https://localhost:${receiver.port}/`, '{}', json);
    expect(result).toEqual({ ok: false, error: 'address 127.0.0.1 is not public' });
    expect(receiver.connections).toBe(0);
  });

  it('reaches localhost when its IPv4 loopback is allowed, connecting to that address only', async () => {
    const result = await client({ allowedNetworks: loopback }).post(`https://localhost:${receiver.port}/`, '{}', json);
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(receiver.connections).toBe(1);
  });

  it('re-checks a name at connect time (DNS rebinding) and refuses it if any address is private', async () => {
    const answers: Record<string, string[]> = {
      'rebound.example.com': ['127.0.0.1'],
      'mixed.example.com': ['1.1.1.1', '127.0.0.1'],
    };
    const resolve = vi.fn(async (host: string) => answers[host] ?? []);
    const safe = client({ allowedNetworks: [], resolve });
    expect(await safe.post(`https://rebound.example.com:${receiver.port}/`, '{}', json)).toEqual({
      ok: false,
      error: 'address 127.0.0.1 is not public',
    });
    expect(await safe.post(`https://mixed.example.com:${receiver.port}/`, '{}', json)).toEqual({
      ok: false,
      error: 'address 127.0.0.1 is not public',
    });
    expect(await safe.post(`https://gone.example.com:${receiver.port}/`, '{}', json)).toEqual({
      ok: false,
      error: 'host name does not resolve',
    });
    expect(resolve).toHaveBeenCalledWith('rebound.example.com');
    expect(receiver.connections).toBe(0);
  });

  it('connects to a vetted name while TLS still checks the certificate against that name', async () => {
    // The receiver's certificate names localhost and 127.0.0.1, not this name.
    const safe = client({ resolve: async () => ['127.0.0.1'] });
    const result = await safe.post(`https://webhooks.example.com:${receiver.port}/`, '{}', json);
    expect(result).toEqual({ ok: false, error: 'TLS: certificate does not match the host name' });
    expect(receiver.requests).toHaveLength(0);

    const allowedLocalhost = client({ allowedNetworks: [...loopback, ipaddr.parseCIDR('::1/128')] });
    expect(await allowedLocalhost.post(`https://localhost:${receiver.port}/`, '{}', json)).toMatchObject({
      ok: true,
      status: 200,
    });
  });

  it('ignores proxy environment variables', async () => {
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, HTTPS_PROXY: process.env.HTTPS_PROXY };
    const dead = 'http://127.0.0.1:9';
    process.env.HTTP_PROXY = dead;
    process.env.HTTPS_PROXY = dead;
    process.env.https_proxy = dead;
    try {
      const result = await client().post(`${receiver.url}/`, '{}', json);
      expect(result).toEqual({ ok: true, status: 200, body: 'ok' });
      expect(receiver.requests).toHaveLength(1);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      delete process.env.https_proxy;
    }
  });

  it('keeps the connection alive between posts to the same host', async () => {
    const safe = client();
    expect((await safe.post(`${receiver.url}/one`, '{}', json)).ok).toBe(true);
    expect((await safe.post(`${receiver.url}/two`, '{}', json)).ok).toBe(true);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.connections).toBe(1);
  });

  it('fails with a TLS error when the certificate is not trusted', async () => {
    const untrusting = createSafeClient({ allowedNetworks: loopback, userAgent: 'pausepoint-test/1' });
    clients.push(untrusting);
    const result = await untrusting.post(`${receiver.url}/`, '{}', json);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^TLS: /);
    expect(receiver.requests).toHaveLength(0);
  });

  it('trusts NODE_EXTRA_CA_CERTS in a fresh process, without the ca option (the production way)', async () => {
    expect(readFileSync(receiver.caFile, 'utf8')).toBe(receiver.ca);
    const script = [
      "import ipaddr from 'ipaddr.js';",
      "import { createSafeClient } from './src/net/safe-client.ts';",
      "const client = createSafeClient({ allowedNetworks: [ipaddr.parseCIDR('127.0.0.0/8')], userAgent: 'child' });",
      `const result = await client.post('${receiver.url}/child', '{}', {});`,
      'await client.close();',
      'console.log(JSON.stringify(result));',
    ].join('\n');
    const { stdout } = await promisify(execFile)('node_modules/.bin/tsx', ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      env: { ...process.env, NODE_EXTRA_CA_CERTS: receiver.caFile },
      timeout: 20_000,
    });
    expect(JSON.parse(stdout.trim())).toEqual({ ok: true, status: 200, body: 'ok' });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/child']);
  });

  it('reports a refused connection concisely', async () => {
    const closed = await startHttpsReceiver();
    const port = closed.port;
    await closed.close();
    const result = await client().post(`https://127.0.0.1:${port}/`, '{}', json);
    expect(result).toEqual({ ok: false, error: 'connection refused' });
  });

  it('refuses non-https URLs and user info without connecting', async () => {
    const safe = client();
    expect(await safe.post(`http://127.0.0.1:${receiver.port}/`, '{}', json)).toMatchObject({ ok: false });
    expect(await safe.post(`https://u:p@127.0.0.1:${receiver.port}/`, '{}', json)).toMatchObject({ ok: false });
    expect(receiver.connections).toBe(0);
  });
});
