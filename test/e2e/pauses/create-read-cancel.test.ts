import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { expectQuickestWithin } from '../../helpers/latency.js';
import { createPause, eventsOf, eventually, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// A pause through the developer's API: POST /v1/pause, reading and listing
// pauses (long-poll included), DELETE /v1/pause/{id}, and the timeout at
// expires_at. Answering a pause: test/e2e/responses/respond-api.test.ts.

let service: TestService;
let alice: Account;
let bob: Account;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
  bob = await registerAccount(service.url);
});
afterAll(() => service.destroy());

const events = (pauseId: string) => eventsOf(service, pauseId);

describe('POST /v1/pause', () => {
  it('creates a pending pause with the documented defaults', async () => {
    const before = Date.now();
    const pause = await createPause(service.url, alice.test);
    expect(pause).toMatchObject({
      object: 'pause',
      mode: 'test',
      status: 'pending',
      title: 'Ship it?',
      body: null,
      options: ['approve', 'reject'],
      allow_text: false,
      timeout_default: null,
      metadata: {},
      response: null,
      notifications: [],
    });
    expect(pause.id).toMatch(/^pause_[0-9a-z]{26}$/);
    const ahead = Date.parse(pause.expires_at) - before;
    expect(ahead).toBeGreaterThanOrEqual(24 * 3600 * 1000 - 1000);
    expect(ahead).toBeLessThanOrEqual(24 * 3600 * 1000 + 5000);
    expect(pause.response_url).toMatch(new RegExp(`^${service.url}/r/${pause.id}\\.[A-Za-z0-9_-]{43}$`));
  });

  it('keeps every field it was given', async () => {
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const pause = await createPause(service.url, alice.live, {
      body: 'Details\nover two lines',
      options: ['yes', 'no', 'later'],
      allow_text: true,
      expires_at: expiresAt,
      timeout_default: 'no',
      metadata: { run: 7, tags: ['a'] },
    });
    expect(pause).toMatchObject({
      mode: 'live',
      body: 'Details\nover two lines',
      options: ['yes', 'no', 'later'],
      allow_text: true,
      expires_at: expiresAt,
      timeout_default: 'no',
      metadata: { run: 7, tags: ['a'] },
    });
  });

  it.each<[string, Record<string, unknown>, undefined]>([
    ['title', {}, undefined],
    ['title', { title: '' }, undefined],
    ['title', { title: 'x'.repeat(201) }, undefined],
    ['body', { title: 't', body: 'x'.repeat(10_001) }, undefined],
    ['options', { title: 't', options: [] }, undefined],
    ['options', { title: 't', options: ['a', 'a'] }, undefined],
    ['options', { title: 't', options: Array.from({ length: 11 }, (_, i) => `o${i}`) }, undefined],
    ['options.0', { title: 't', options: [''] }, undefined],
    ['options.0', { title: 't', options: ['x'.repeat(101)] }, undefined],
    ['allow_text', { title: 't', allow_text: 'true' }, undefined],
    ['expires_in', { title: 't', expires_in: 0 }, undefined],
    ['expires_in', { title: 't', expires_in: 30 * 86400 + 1 }, undefined],
    ['expires_in', { title: 't', expires_in: 60, expires_at: new Date(Date.now() + 60_000).toISOString() }, undefined],
    ['expires_at', { title: 't', expires_at: 'tomorrow' }, undefined],
    ['expires_at', { title: 't', expires_at: new Date(Date.now() - 1000).toISOString() }, undefined],
    ['expires_at', { title: 't', expires_at: new Date(Date.now() + 31 * 86400_000).toISOString() }, undefined],
    ['timeout_default', { title: 't', timeout_default: 'maybe' }, undefined],
    ['metadata', { title: 't', metadata: { blob: 'x'.repeat(16 * 1024) } }, undefined],
    ['metadata', { title: 't', metadata: [1, 2] }, undefined],
    ['colour', { title: 't', colour: 'red' }, undefined],
    ['notify.email.0', { title: 't', notify: { email: ['not-an-address'] } }, undefined],
  ])('rejects a bad %s with 400 naming it', async (field, body) => {
    const reply = await call(service.url, 'POST', '/v1/pause', { token: alice.test, body });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
    expect(reply.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('needs an API key, and a session token is not one', async () => {
    expect((await call(service.url, 'POST', '/v1/pause', { body: { title: 't' } })).status).toBe(401);
    const login = await call(service.url, 'POST', '/v1/auth/login', {
      body: { email: alice.email, password: alice.password },
    });
    const reply = await call(service.url, 'POST', '/v1/pause', {
      token: login.body.session.token,
      body: { title: 't' },
    });
    expect(reply.status).toBe(401);
  });

  it('replays the first response for a repeated Idempotency-Key and refuses a changed body', async () => {
    const headers = { 'idempotency-key': `key-${Math.random()}` };
    const first = await call(service.url, 'POST', '/v1/pause', { token: alice.test, headers, body: { title: 'Once' } });
    const again = await call(service.url, 'POST', '/v1/pause', { token: alice.test, headers, body: { title: 'Once' } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const changed = await call(service.url, 'POST', '/v1/pause', {
      token: alice.test,
      headers,
      body: { title: 'Twice' },
    });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('idempotency_conflict');
    // The same key belongs to each developer and mode separately.
    const other = await call(service.url, 'POST', '/v1/pause', { token: alice.live, headers, body: { title: 'Once' } });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
  });

  it('creates one pause for concurrent requests with the same Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `race-${Math.random()}` };
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(service.url, 'POST', '/v1/pause', { token: bob.test, headers, body: { title: 'Race' } }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    const rows = await service.store.db.selectFrom('pauses').select('id').where('title', '=', 'Race').execute();
    expect(rows).toHaveLength(1);
  });
});

describe('reading pauses', () => {
  it('returns a pause to its owner in its mode only', async () => {
    const pause = await createPause(service.url, alice.test);
    expect((await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: alice.test })).body.id).toBe(pause.id);
    for (const key of [alice.live, bob.test, bob.live]) {
      const reply = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: key });
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('not_found');
    }
  });

  it('lists newest first with cursor pagination and a status filter', async () => {
    const carol = await registerAccount(service.url);
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createPause(service.url, carol.test, { title: `p${i}` }));
    await call(service.url, 'DELETE', `/v1/pause/${created[1].id}`, { token: carol.test });

    const first = await call(service.url, 'GET', '/v1/pause?limit=2', { token: carol.test });
    expect(first.body.object).toBe('list');
    expect(first.body.data.map((p: { title: string }) => p.title)).toEqual(['p4', 'p3']);
    expect(first.body.has_more).toBe(true);
    const second = await call(service.url, 'GET', `/v1/pause?limit=2&starting_after=${first.body.data[1].id}`, {
      token: carol.test,
    });
    expect(second.body.data.map((p: { title: string }) => p.title)).toEqual(['p2', 'p1']);
    const last = await call(service.url, 'GET', `/v1/pause?limit=2&starting_after=${second.body.data[1].id}`, {
      token: carol.test,
    });
    expect(last.body).toMatchObject({ has_more: false });
    expect(last.body.data.map((p: { title: string }) => p.title)).toEqual(['p0']);

    const cancelled = await call(service.url, 'GET', '/v1/pause?status=cancelled', { token: carol.test });
    expect(cancelled.body.data.map((p: { id: string }) => p.id)).toEqual([created[1].id]);
    const pending = await call(service.url, 'GET', '/v1/pause?status=pending', { token: carol.test });
    expect(pending.body.data).toHaveLength(4);
    expect((await call(service.url, 'GET', '/v1/pause', { token: carol.live })).body.data).toEqual([]);
    expect((await call(service.url, 'GET', '/v1/pause?limit=101', { token: carol.test })).status).toBe(400);
    expect((await call(service.url, 'GET', '/v1/pause?status=done', { token: carol.test })).status).toBe(400);
  });

  it('long-polls: returns within 100 ms of an answer', async () => {
    await expectQuickestWithin('from the answer to the long-poll’s reply', 100, async () => {
      const pause = await createPause(service.url, alice.test);
      const started = Date.now();
      const waiting = call(service.url, 'GET', `/v1/pause/${pause.id}?wait=10`, { token: alice.test }).then(
        (reply) => ({ reply, at: Date.now() }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const answer = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });
      const answeredAt = Date.now();
      expect(answer.status).toBe(200);
      const { reply, at } = await waiting;
      expect(reply.body.status).toBe('responded');
      expect(at - started).toBeGreaterThanOrEqual(300);
      return at - answeredAt;
    });
  });

  it('long-poll gives up after wait seconds with the pause still pending', async () => {
    const pause = await createPause(service.url, alice.test);
    const started = Date.now();
    const reply = await call(service.url, 'GET', `/v1/pause/${pause.id}?wait=1`, { token: alice.test });
    expect(reply.body.status).toBe('pending');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect((await call(service.url, 'GET', `/v1/pause/${pause.id}?wait=61`, { token: alice.test })).status).toBe(400);
  });
});

describe('DELETE /v1/pause/{id}', () => {
  it('cancels once, emits pause.cancelled with the metadata, then answers 409', async () => {
    const pause = await createPause(service.url, alice.test, { metadata: { ticket: 'OPS-1' } });
    const reply = await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: alice.test });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: pause.id, status: 'cancelled', response: null });
    const again = await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: alice.test });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('pause_not_pending');

    const [event, ...more] = await events(pause.id);
    expect(more).toHaveLength(0);
    expect(event?.type).toBe('pause.cancelled');
    const payload = JSON.parse(event?.payload ?? '{}');
    expect(Object.keys(payload)).toEqual(['event', 'pause_id', 'developer_id', 'timestamp', 'data']);
    expect(payload).toMatchObject({
      event: 'pause.cancelled',
      pause_id: pause.id,
      developer_id: alice.id,
      data: { metadata: { ticket: 'OPS-1' } },
    });
    expect(payload.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("is 404 for another developer's or mode's pause, which stays pending", async () => {
    const pause = await createPause(service.url, alice.test);
    for (const key of [bob.test, alice.live]) {
      expect((await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: key })).status).toBe(404);
    }
    expect((await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: alice.test })).body.status).toBe(
      'pending',
    );
  });
});

describe('timeouts', () => {
  it('times out within a second of expires_at with timeout_default as the choice', async () => {
    const withDefault = await createPause(service.url, alice.test, {
      expires_in: 1,
      timeout_default: 'reject',
      metadata: { k: 'v' },
    });
    const withoutDefault = await createPause(service.url, alice.test, { expires_in: 1 });
    await eventually(
      async () => {
        const rows = await service.store.db
          .selectFrom('pauses')
          .selectAll()
          .where('id', 'in', [withDefault.id, withoutDefault.id])
          .execute();
        expect(rows.map((r) => r.status)).toEqual(['timed_out', 'timed_out']);
      },
      3000,
      20,
    );
    const deadline = Date.parse(withDefault.expires_at);
    const [event] = await events(withDefault.id);
    const payload = JSON.parse(event?.payload ?? '{}');
    expect(Date.parse(payload.timestamp) - deadline).toBeLessThan(1000);
    expect(Object.keys(payload.data)).toEqual(['choice', 'response_at', 'metadata']);
    expect(payload.data).toEqual({ choice: 'reject', response_at: withDefault.expires_at, metadata: { k: 'v' } });
    const [other] = await events(withoutDefault.id);
    expect(JSON.parse(other?.payload ?? '{}').data.choice).toBeNull();

    const read = await call(service.url, 'GET', `/v1/pause/${withDefault.id}`, { token: alice.test });
    expect(read.body).toMatchObject({
      status: 'timed_out',
      response: { choice: 'reject', text: null, response_at: withDefault.expires_at },
    });
    expect((await call(service.url, 'DELETE', `/v1/pause/${withDefault.id}`, { token: alice.test })).status).toBe(409);
  });
});
