import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseToken } from '../../../src/domain/response-token.js';
import { deriveServiceKeys } from '../../../src/secrets.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventsOf, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Named reviewers through the API: who may answer, who did, and how many
// must agree. (Races: test/e2e/reviewers/vote-races.test.ts; reminders and escalation:
// test/e2e/reviewers/reminders-and-escalation.test.ts; the reviewer's page: test/e2e/reviewers/page-browser.test.ts.)

let service: TestService;
let alice: Account;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
});
afterAll(() => service.destroy());

const three = [
  { email: 'Ann@Example.com', name: 'Ann' },
  { email: 'bob@example.com' },
  { email: 'cy@example.com', name: 'Cy' },
];

const vote = (reviewer: { response_url: string }, choice: string, text?: string) =>
  call(service.url, 'POST', `/v1/respond/${tokenOf(reviewer)}`, { body: { choice, ...(text ? { text } : {}) } });

const read = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: alice.test })).body;

describe('reviewers', () => {
  it('lists each reviewer with their own link and no shared link', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three, quorum: 2, veto: ['reject'] });
    expect(pause.response_url).toBeNull();
    expect(pause.quorum).toBe(2);
    expect(pause.veto).toEqual(['reject']);
    expect(pause.reviewers).toHaveLength(3);
    expect(pause.reviewers[0]).toMatchObject({ email: 'ann@example.com', name: 'Ann', vote: null, added_by: 'create' });
    expect(pause.reviewers[1].name).toBeNull();
    const urls = new Set(pause.reviewers.map((r: { response_url: string }) => r.response_url));
    expect(urls.size).toBe(3);
    for (const reviewer of pause.reviewers) expect(reviewer.id).toMatch(/^rvw_[0-9a-z]{26}$/);
    expect(await read(pause.id)).toEqual(pause);
  });

  it('decides when an option reaches the quorum, with responded_by and every vote', async () => {
    const pause = await createPause(service.url, alice.test, {
      reviewers: three,
      quorum: 2,
      allow_text: true,
      metadata: { ticket: 7 },
    });
    const [ann, bob, cy] = pause.reviewers;
    const first = await vote(ann, 'approve', 'fine by me');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      status: 'pending',
      choice: null,
      text: null,
      values: null,
      edited: false,
      response_at: null,
      your_vote: { choice: 'approve', text: 'fine by me', values: null, voted_at: expect.any(String) },
    });
    expect((await read(pause.id)).status).toBe('pending');
    const second = await vote(bob, 'reject');
    expect(second.body.status).toBe('pending');
    const third = await vote(cy, 'approve');
    expect(third.body).toMatchObject({ status: 'responded', choice: 'approve', text: null });

    const decided = await read(pause.id);
    expect(decided.response).toMatchObject({
      choice: 'approve',
      responded_by: { id: cy.id, email: 'cy@example.com', name: 'Cy' },
    });
    expect(decided.response.votes.map((v: { email: string; choice: string }) => [v.email, v.choice])).toEqual([
      ['ann@example.com', 'approve'],
      ['bob@example.com', 'reject'],
      ['cy@example.com', 'approve'],
    ]);
    expect(decided.reviewers[0].vote).toMatchObject({ choice: 'approve', text: 'fine by me' });

    const events = await eventsOf(service, pause.id);
    expect(events.map((e) => e.type).sort()).toEqual(['pause.responded', 'pause.voted', 'pause.voted', 'pause.voted']);
    const responded = JSON.parse(events.find((e) => e.type === 'pause.responded')?.payload ?? '{}');
    expect(responded.data).toMatchObject({
      choice: 'approve',
      metadata: { ticket: 7 },
      responded_by: { id: cy.id, email: 'cy@example.com', name: 'Cy' },
    });
    expect(responded.data.votes).toHaveLength(3);
    const voted = events.filter((e) => e.type === 'pause.voted').map((e) => JSON.parse(e.payload).data);
    expect(voted.map((d) => d.votes_so_far).sort()).toEqual([1, 2, 3]);
    expect(voted[0]).toMatchObject({ reviewer: { id: expect.any(String) }, metadata: { ticket: 7 } });
  });

  it('lets a veto option decide at once', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three, quorum: 3, veto: ['reject'] });
    await vote(pause.reviewers[0], 'approve');
    const veto = await vote(pause.reviewers[1], 'reject');
    expect(veto.body).toMatchObject({ status: 'responded', choice: 'reject' });
    const late = await vote(pause.reviewers[2], 'approve');
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('already_responded');
  });

  it('counts one vote per reviewer', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three, quorum: 2 });
    expect((await vote(pause.reviewers[0], 'approve')).status).toBe(200);
    const again = await vote(pause.reviewers[0], 'approve');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_voted');
    expect((await read(pause.id)).status).toBe('pending');
  });

  it('shows a reviewer the counts and their own vote, never the others', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three, quorum: 2 });
    await vote(pause.reviewers[0], 'reject');
    const seen = await call(service.url, 'GET', `/v1/respond/${tokenOf(pause.reviewers[1])}`);
    expect(seen.status).toBe(200);
    expect(seen.body.quorum).toEqual({ needed: 2, reviewers: 3, votes_so_far: 1 });
    expect(seen.body.your_vote).toBeNull();
    expect(seen.text).not.toMatch(/ann@|bob@|cy@|rvw_|voted_at/);
    await vote(pause.reviewers[1], 'approve');
    const after = await call(service.url, 'GET', `/v1/respond/${tokenOf(pause.reviewers[1])}`);
    expect(after.body.your_vote).toMatchObject({ choice: 'approve' });
    expect(after.body.quorum.votes_so_far).toBe(2);
  });

  it('refuses a reviewer token on another pause, a forged one, and a truncated one', async () => {
    const one = await createPause(service.url, alice.test, { reviewers: three });
    const other = await createPause(service.url, alice.test, { reviewers: three });
    const [pauseId, reviewerId, mac] = tokenOf(one.reviewers[0]).split('.');
    const otherPauseId = other.id;
    for (const token of [
      `${otherPauseId}.${reviewerId}.${mac}`,
      `${pauseId}.${one.reviewers[1].id}.${mac}`,
      `${pauseId}.${reviewerId}.${mac?.slice(0, -2)}`,
      `${pauseId}.${reviewerId}`,
      `${pauseId}.${mac}`,
    ]) {
      const reply = await call(service.url, 'POST', `/v1/respond/${token}`, { body: { choice: 'approve' } });
      expect(reply.status, token).toBe(404);
    }
    expect((await read(one.id)).reviewers.every((r: { vote: unknown }) => r.vote === null)).toBe(true);
  });

  it('refuses a genuine shared link of a pause with reviewers, and counts no vote that does not fit the question', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three, quorum: 2 });
    // Never given out (response_url is null), but the service's key makes it.
    const shared = responseToken(deriveServiceKeys(service.secretKey).respondToken, pause.id);
    for (const method of ['GET', 'POST'] as const) {
      const body = method === 'POST' ? { choice: 'approve' } : undefined;
      const reply = await call(service.url, method, `/v1/respond/${shared}`, { body });
      expect(reply.status, method).toBe(404);
    }
    for (const [body, field] of [
      [{ choice: 'maybe' }, 'choice'],
      [{ choice: 'approve', text: 'hi' }, 'text'],
    ] as const) {
      const reply = await vote(pause.reviewers[0], body.choice, 'text' in body ? body.text : undefined);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.details.fields).toEqual([expect.objectContaining({ field })]);
    }
    const after = await read(pause.id);
    expect(after.status).toBe('pending');
    expect(after.reviewers.every((r: { vote: unknown }) => r.vote === null)).toBe(true);
    expect(await eventsOf(service, pause.id)).toEqual([]);
  });

  it('names every bad reviewer field in one 400', async () => {
    const reply = await call(service.url, 'POST', '/v1/pause', {
      token: alice.test,
      body: {
        title: 'x',
        reviewers: [{ email: 'a@example.com' }, { email: 'A@example.com' }],
        quorum: 3,
        veto: ['maybe'],
        remind_max: 2,
        notify: { email: ['z@example.com'] },
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(
      ['notify', 'quorum', 'remind_max', 'reviewers.1.email', 'veto.0'].sort(),
    );
    const without = await call(service.url, 'POST', '/v1/pause', {
      token: alice.test,
      body: { title: 'x', quorum: 1, veto: ['reject'], remind_every: 60, escalate: { after: 5, reviewers: three } },
    });
    expect(without.status).toBe(400);
    expect(without.body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(
      ['escalate', 'quorum', 'remind_every', 'veto'].sort(),
    );
    const schema = await call(service.url, 'POST', '/v1/pause', {
      token: alice.test,
      body: { title: 'x', reviewers: [{ email: 'not-an-email' }], remind_every: 5 },
    });
    expect(schema.status).toBe(400);
    expect(schema.body.error.message).toMatch(/reviewers\.0\.email/);
    expect(schema.body.error.message).toMatch(/remind_every/);
  });

  it('refuses live reviewers when email is not configured', async () => {
    const reply = await call(service.url, 'POST', '/v1/pause', {
      token: alice.live,
      body: { title: 'x', reviewers: three },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('channel_unavailable');
  });

  it('records each reviewer notification as suppressed in test mode', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three });
    expect(pause.notifications).toHaveLength(3);
    expect(pause.notifications.map((n: { to: string; status: string }) => [n.to, n.status])).toEqual(
      three.map((r) => [r.email.toLowerCase(), 'suppressed']),
    );
  });

  it('keeps a timeline from creation to outcome', async () => {
    const pause = await createPause(service.url, alice.test, { reviewers: three, quorum: 2 });
    await vote(pause.reviewers[2], 'approve');
    await vote(pause.reviewers[0], 'approve');
    const reply = await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: alice.test });
    expect(reply.status).toBe(200);
    const types = reply.body.data.map((e: { type: string }) => e.type);
    expect(types).toEqual(['created', 'notified', 'notified', 'notified', 'voted', 'voted', 'responded']);
    const [, , , , firstVote, , responded] = reply.body.data;
    expect(firstVote.actor).toEqual({ type: 'reviewer', email: 'cy@example.com' });
    expect(responded).toMatchObject({
      type: 'responded',
      actor: { type: 'reviewer', email: 'ann@example.com' },
      detail: { choice: 'approve' },
    });
    const other = await registerAccount(service.url);
    const foreign = await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: other.test });
    expect(foreign.status).toBe(404);
  });

  it('leaves pauses without reviewers as they were', async () => {
    const pause = await createPause(service.url, alice.test, {});
    expect(pause.response_url).toMatch(/\/r\/pause_/);
    expect(pause).toMatchObject({ reviewers: [], quorum: null, veto: [], escalate: null });
    const answered = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });
    expect(answered.body).toEqual({
      status: 'responded',
      choice: 'approve',
      text: null,
      values: null,
      edited: false,
      response_at: expect.any(String),
    });
    const [event] = await eventsOf(service, pause.id);
    expect(Object.keys(JSON.parse(event?.payload ?? '{}').data).sort()).toEqual([
      'choice',
      'metadata',
      'response_at',
      'text',
    ]);
    expect((await read(pause.id)).response).toMatchObject({ responded_by: null, votes: [] });
  });
});
