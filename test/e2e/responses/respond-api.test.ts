import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventsOf, eventually, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The public respond API (GET and POST /v1/respond/{token}), which a human's
// answer goes through, and the one outcome each pause ends with however
// answers, cancels and expiry race.

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

describe('the respond API', () => {
  it('shows the question only: never metadata, notify targets or developer data', async () => {
    const pause = await createPause(service.url, alice.test, {
      body: 'why',
      metadata: { secret_ref: 'S3CR3T' },
      notify: { email: ['ops@example.com'] },
    });
    const reply = await call(service.url, 'GET', `/v1/respond/${tokenOf(pause)}`);
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(
      [
        'allow_text',
        'body',
        'expires_at',
        'options',
        'response',
        'status',
        'title',
        'form',
        'require_text',
        'options_style',
      ].sort(),
    );
    expect(reply.text).not.toMatch(/S3CR3T|ops@example|dev_|pause_/);
  });

  it('records an answer once and emits pause.responded with choice, text and metadata', async () => {
    const pause = await createPause(service.url, alice.test, { allow_text: true, metadata: { n: 1 } });
    const token = tokenOf(pause);
    const reply = await call(service.url, 'POST', `/v1/respond/${token}`, {
      body: { choice: 'reject', text: 'not today' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'responded', choice: 'reject', text: 'not today' });
    const again = await call(service.url, 'POST', `/v1/respond/${token}`, { body: { choice: 'approve' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_responded');

    const read = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: alice.test });
    expect(read.body).toMatchObject({
      status: 'responded',
      response: { choice: 'reject', text: 'not today', response_at: reply.body.response_at },
    });
    const [event, ...more] = await events(pause.id);
    expect(more).toHaveLength(0);
    expect(JSON.parse(event?.payload ?? '{}')).toMatchObject({
      event: 'pause.responded',
      data: { choice: 'reject', text: 'not today', response_at: reply.body.response_at, metadata: { n: 1 } },
    });
  });

  it('rejects a choice not offered, text when not allowed and text over 10,000 characters', async () => {
    const plain = await createPause(service.url, alice.test);
    const withText = await createPause(service.url, alice.test, { allow_text: true });
    const cases: [string, unknown, string][] = [
      [tokenOf(plain), { choice: 'maybe' }, 'choice'],
      [tokenOf(plain), { choice: 'approve', text: 'hi' }, 'text'],
      [tokenOf(withText), { choice: 'approve', text: 'x'.repeat(10_001) }, 'text'],
      [tokenOf(plain), {}, 'choice'],
    ];
    for (const [token, body, field] of cases) {
      const reply = await call(service.url, 'POST', `/v1/respond/${token}`, { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.details.fields[0].field).toBe(field);
    }
    expect((await call(service.url, 'GET', `/v1/pause/${plain.id}`, { token: alice.test })).body.status).toBe(
      'pending',
    );
  });

  it('answers 410 for cancelled and expired pauses', async () => {
    const cancelled = await createPause(service.url, alice.test);
    await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: alice.test });
    const expired = await createPause(service.url, alice.test, { expires_in: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    for (const pause of [cancelled, expired]) {
      const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });
      expect(reply.status).toBe(410);
      expect(reply.body.error.code).toBe('pause_closed');
    }
  });

  it('answers 404 for any token that is not genuine', async () => {
    const pause = await createPause(service.url, alice.test);
    const other = await createPause(service.url, bob.test);
    const token = tokenOf(pause);
    const signature = token.split('.')[1] ?? '';
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    const forged = [
      `${pause.id}.${flipped}`,
      `${other.id}.${signature}`,
      pause.id,
      `${pause.id}.`,
      'nonsense',
      `${pause.id}.${signature}x`,
    ];
    for (const bad of forged) {
      for (const method of ['GET', 'POST']) {
        const reply = await call(service.url, method, `/v1/respond/${encodeURIComponent(bad)}`, {
          body: method === 'POST' ? { choice: 'approve' } : undefined,
        });
        expect(reply.status, `${method} ${bad}`).toBe(404);
        expect(reply.body.error.code).toBe('not_found');
      }
    }
  });
});

describe('exactly one outcome', () => {
  it('gives one 200 and one event to 25 concurrent answers', async () => {
    const pause = await createPause(service.url, alice.test, { options: ['a', 'b', 'c'] });
    const replies = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: ['a', 'b', 'c'][i % 3] } }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(24);
    expect(await events(pause.id)).toHaveLength(1);
    const winner = replies.find((r) => r.status === 200)?.body.choice;
    const read = await call(service.url, 'GET', `/v1/pause/${pause.id}`, { token: alice.test });
    expect(read.body.response.choice).toBe(winner);
  });

  it('settles answer vs cancel vs expiry races with one terminal state and one event', async () => {
    const pauses = await Promise.all(
      Array.from({ length: 12 }, () => createPause(service.url, alice.test, { expires_in: 1 })),
    );
    await new Promise((resolve) => setTimeout(resolve, 950));
    await Promise.all(
      pauses.flatMap((pause) => [
        call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } }),
        call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: alice.test }),
        call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'reject' } }),
      ]),
    );
    await eventually(async () => {
      for (const pause of pauses) {
        const row = await service.store.db
          .selectFrom('pauses')
          .select('status')
          .where('id', '=', pause.id)
          .executeTakeFirstOrThrow();
        expect(row.status).not.toBe('pending');
        const rows = await events(pause.id);
        expect(rows).toHaveLength(1);
        expect(rows[0]?.type).toBe(`pause.${row.status}`);
      }
    });
  });
});
