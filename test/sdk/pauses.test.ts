import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Pause,
  Pausepoint,
  PausepointConnectionError,
  PausepointError,
  WaitTimeoutError,
} from '../../sdk/src/index.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { sleep, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// Every pause method of the SDK against a real service over a real port.

let service: TestService;
let dev: Account;
let client: Pausepoint;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: service.url });
});
afterAll(() => service?.destroy());

/** Answers a pause as the human would, through its response token. */
async function answer(pause: Pause, choice: string, text?: string) {
  const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
    body: text === undefined ? { choice } : { choice, text },
  });
  expect(reply.status, reply.text).toBe(200);
}

async function freshClient() {
  const account = await registerAccount(service.url);
  return new Pausepoint({ apiKey: account.test, baseUrl: service.url });
}

describe('pauses', () => {
  it('creates a pause with every field, and reads it back', async () => {
    const pause = await client.pauses.create({
      title: 'Deploy v2 to production?',
      body: '14 commits',
      options: ['ship', 'hold'],
      allow_text: true,
      expires_in: 600,
      timeout_default: 'hold',
      metadata: { pipeline: 4711 },
      notify: { email: ['ops@example.com'] },
    });
    expect(pause).toMatchObject({
      id: expect.stringMatching(/^pause_/),
      object: 'pause',
      mode: 'test',
      status: 'pending',
      title: 'Deploy v2 to production?',
      body: '14 commits',
      options: ['ship', 'hold'],
      allow_text: true,
      timeout_default: 'hold',
      metadata: { pipeline: 4711 },
      response: null,
    });
    expect(pause.response_url).toMatch(new RegExp(`^${service.url}/r/${pause.id}\\.`));
    expect(await client.pauses.get(pause.id)).toEqual(pause);
  });

  it('makes a create with an idempotency key safe to repeat', async () => {
    const key = `deploy-${Date.now()}`;
    const first = await client.pauses.create({ title: 'Once only?' }, { idempotencyKey: key });
    const again = await client.pauses.create({ title: 'Once only?' }, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    const conflict = await client.pauses.create({ title: 'Something else?' }, { idempotencyKey: key }).catch((e) => e);
    expect(conflict).toBeInstanceOf(PausepointError);
    expect(conflict).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    // Without a key, each create is a new pause (the SDK's own key differs every time).
    const a = await client.pauses.create({ title: 'Twice?' });
    const b = await client.pauses.create({ title: 'Twice?' });
    expect(a.id).not.toBe(b.id);
  });

  it('lists every pause across pages, newest first, and filters by status', async () => {
    const own = await freshClient();
    const made: Pause[] = [];
    for (let i = 0; i < 5; i += 1) made.push(await own.pauses.create({ title: `Question ${i}?` }));
    await own.pauses.cancel(made[1]!.id);

    const ids: string[] = [];
    for await (const pause of own.pauses.list({ limit: 2 })) ids.push(pause.id);
    expect(ids).toEqual(made.map((pause) => pause.id).reverse());

    expect((await own.pauses.list({ limit: 2 }).toArray(3)).map((p) => p.id)).toEqual(ids.slice(0, 3));
    const cancelled = await own.pauses.list({ status: 'cancelled' }).toArray();
    expect(cancelled.map((pause) => pause.id)).toEqual([made[1]!.id]);
    const after = await own.pauses.list({ limit: 1, starting_after: ids[2] }).toArray();
    expect(after.map((pause) => pause.id)).toEqual(ids.slice(3));

    // Breaking out of the loop stops fetching pages.
    let seen = 0;
    for await (const _ of own.pauses.list({ limit: 1 })) {
      seen += 1;
      if (seen === 2) break;
    }
    expect(seen).toBe(2);
  });

  it('cancels a pending pause; a second cancel is a typed 409', async () => {
    const pause = await client.pauses.create({ title: 'Cancel me?' });
    const cancelled = await client.pauses.cancel(pause.id);
    expect(cancelled).toMatchObject({ id: pause.id, status: 'cancelled', response: null });
    const error = await client.pauses.cancel(pause.id).catch((e) => e);
    expect(error).toBeInstanceOf(PausepointError);
    expect(error).toMatchObject({ name: 'PausepointError', status: 409, code: 'pause_not_pending' });
    expect(error.requestId).toMatch(/^req_/);
    expect(error.message).toMatch(/already cancelled/);
  });
});

describe('waitFor', () => {
  it('long-polls until a human answers', async () => {
    const pause = await client.pauses.create({ title: 'Wait for me?', allow_text: true });
    const started = Date.now();
    setTimeout(() => void answer(pause, 'approve', 'go'), 300);
    const done = await client.pauses.waitFor(pause.id);
    expect(done.status).toBe('responded');
    expect(done.response).toMatchObject({ choice: 'approve', text: 'go' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('returns at once for a pause that has already ended', async () => {
    const pause = await client.pauses.create({ title: 'Done already?' });
    await client.pauses.cancel(pause.id);
    expect((await client.pauses.waitFor(pause.id)).status).toBe('cancelled');
  });

  it('gives up after timeoutMs with a WaitTimeoutError carrying the pending pause', async () => {
    const pause = await client.pauses.create({ title: 'Nobody answers?' });
    const started = Date.now();
    const error = await client.pauses.waitFor(pause.id, { timeoutMs: 1500 }).catch((e) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ code: 'wait_timeout' });
    expect(error.pause).toMatchObject({ id: pause.id, status: 'pending' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('stops when its signal aborts, with the signal’s reason', async () => {
    const pause = await client.pauses.create({ title: 'Abort me?' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop waiting')), 300);
    const started = Date.now();
    await expect(client.pauses.waitFor(pause.id, { signal: controller.signal })).rejects.toThrow('stop waiting');
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await client.pauses.get(pause.id)).status).toBe('pending');
  });
});

describe('ask', () => {
  it('resolves with the answer', async () => {
    const outcome = await client.ask(
      { title: 'Refund order 123?', options: ['refund', 'deny'], allow_text: true },
      { onCreated: (pause) => void answer(pause, 'refund', 'customer is right') },
    );
    expect(outcome).toMatchObject({ status: 'responded', choice: 'refund', text: 'customer is right' });
    expect(outcome.response_at).toEqual(expect.any(String));
    expect(outcome.pause.status).toBe('responded');
  });

  it('resolves with the default when nobody answers in time', async () => {
    const outcome = await client.ask({ title: 'Anyone?', expires_in: 1, timeout_default: 'reject' });
    expect(outcome).toMatchObject({ status: 'timed_out', choice: 'reject', text: null });
    expect(outcome.response_at).toBe(outcome.pause.expires_at);
  });

  it('resolves with a null choice on a timeout without default', async () => {
    const outcome = await client.ask({ title: 'Anyone at all?', expires_in: 1 });
    expect(outcome).toMatchObject({ status: 'timed_out', choice: null, text: null });
  });

  it('resolves as cancelled when the pause is cancelled', async () => {
    const outcome = await client.ask(
      { title: 'Cancelled meanwhile?' },
      { onCreated: (pause) => void sleep(200).then(() => client.pauses.cancel(pause.id)) },
    );
    expect(outcome).toMatchObject({ status: 'cancelled', choice: null, text: null, response_at: null });
  });

  it('cancels the pause it gives up on', async () => {
    let created: Pause | undefined;
    const error = await client
      .ask(
        { title: 'Too slow?' },
        {
          timeoutMs: 1200,
          onCreated: (pause) => {
            created = pause;
          },
        },
      )
      .catch((e) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((await client.pauses.get(created!.id)).status).toBe('cancelled');

    const controller = new AbortController();
    const aborted = client.ask(
      { title: 'Aborted?' },
      {
        signal: controller.signal,
        onCreated: (pause) => {
          created = pause;
          controller.abort();
        },
      },
    );
    await expect(aborted).rejects.toThrow();
    expect((await client.pauses.get(created!.id)).status).toBe('cancelled');
  });
});

describe('configuration and errors', () => {
  it('reads the key from PAUSEPOINT_API_KEY, and refuses to start without one', async () => {
    const saved = process.env.PAUSEPOINT_API_KEY;
    try {
      process.env.PAUSEPOINT_API_KEY = dev.test;
      const fromEnv = new Pausepoint({ baseUrl: `${service.url}/` });
      expect((await fromEnv.pauses.create({ title: 'From the environment?' })).mode).toBe('test');
      delete process.env.PAUSEPOINT_API_KEY;
      expect(() => new Pausepoint({ baseUrl: service.url })).toThrow(
        expect.objectContaining({ code: 'missing_api_key' }),
      );
    } finally {
      if (saved === undefined) delete process.env.PAUSEPOINT_API_KEY;
      else process.env.PAUSEPOINT_API_KEY = saved;
    }
  });

  it('throws typed API errors with status, code, request id and details', async () => {
    const wrongKey = new Pausepoint({ apiKey: `svc_test_${'0'.repeat(48)}`, baseUrl: service.url });
    const unauthorized = await wrongKey.pauses.get('pause_x').catch((e) => e);
    expect(unauthorized).toMatchObject({
      status: 401,
      code: 'unauthorized',
      requestId: expect.stringMatching(/^req_/),
    });

    const missing = await client.pauses.get('pause_01m8000000000000000000000').catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });

    const invalid = await client.pauses.create({ title: '' }).catch((e) => e);
    expect(invalid).toBeInstanceOf(PausepointError);
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(invalid.details?.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'title' })]));
  });

  it('says when the service cannot be reached', async () => {
    const nowhere = new Pausepoint({ apiKey: dev.test, baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    const error = await nowhere.pauses.get('pause_x').catch((e) => e);
    expect(error).toBeInstanceOf(PausepointConnectionError);
    expect(error).toMatchObject({ code: 'connection_error', status: undefined });
    expect(error.message).toContain('http://127.0.0.1:9');
  });
});
