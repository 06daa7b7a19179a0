import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Outcome,
  outcomeOf,
  type Pause,
  Pausepoint,
  PausepointError,
  parseWebhookEvent,
  type Reviewer,
  type TimelineEntry,
  type Vote,
  type WebhookEvent,
} from '../../sdk/src/index.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { tokenOf } from '../helpers/pauses.js';
import { webhookTests } from '../helpers/webhook-service.js';

// Reviewers through the SDK against a real service: create and ask with
// reviewers, quorum, veto, reminders and escalation; each reviewer votes with
// their own link (POST /v1/respond/{token}); the outcome says who decided and
// lists the votes; the timeline; pause.voted delivered and parsed.
const SECRET = 'whsec_sdk_reviewers_0123456789';

const webhooks = webhookTests({ defaultResponse: { status: 204, body: '' } });
let dev: Account;
let client: Pausepoint;

beforeAll(async () => {
  dev = await registerAccount(webhooks.service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: webhooks.service.url });
});

/** A reviewer votes through their own link, as their page does; returns the service's answer. */
async function vote(reviewer: Reviewer, choice: string, text?: string) {
  const reply = await call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(reviewer)}`, {
    body: text === undefined ? { choice } : { choice, text },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

const reviewerOf = (pause: Pause, email: string) => pause.reviewers.find((reviewer) => reviewer.email === email)!;

describe('create with reviewers', () => {
  it('sends every reviewer field and reads them back, typed', async () => {
    const pause = await client.pauses.create({
      title: 'Drop the old orders table?',
      options: ['drop', 'keep'],
      reviewers: [{ email: 'ana@example.com', name: 'Ana Lima' }, { email: 'bo@example.com' }],
      quorum: 2,
      veto: ['keep'],
      remind_every: 600,
      remind_max: 2,
      escalate: { after: 3600, reviewers: [{ email: 'cto@example.com', name: 'The CTO' }] },
    });
    expect(pause).toMatchObject({
      status: 'pending',
      response_url: null,
      quorum: 2,
      veto: ['keep'],
      remind_every: 600,
      remind_max: 2,
      escalate: { after: 3600, reviewers: [{ email: 'cto@example.com', name: 'The CTO' }], escalated_at: null },
    });
    expect(pause.reviewers).toEqual([
      {
        id: expect.stringMatching(/^rvw_/),
        email: 'ana@example.com',
        name: 'Ana Lima',
        response_url: expect.any(String),
        vote: null,
        added_by: 'create',
      },
      {
        id: expect.stringMatching(/^rvw_/),
        email: 'bo@example.com',
        name: null,
        response_url: expect.any(String),
        vote: null,
        added_by: 'create',
      },
    ]);
    // Each reviewer's own link binds the pause and the reviewer.
    for (const reviewer of pause.reviewers) {
      expect(reviewer.response_url).toMatch(new RegExp(`^${webhooks.service.url}/r/${pause.id}\\.${reviewer.id}\\.`));
    }
    expect(await client.pauses.get(pause.id)).toEqual(pause);
  });

  it('a pause without reviewers has the empty fields, and its shared link', async () => {
    const pause = await client.pauses.create({ title: 'Plain?' });
    expect(pause).toMatchObject({ reviewers: [], quorum: null, veto: [], remind_every: null, escalate: null });
    expect(pause.response_url).toEqual(expect.any(String));
  });

  it('refuses reviewer fields without reviewers with a typed 400 naming the field', async () => {
    const error = await client.pauses.create({ title: 'Quorum of nobody?', quorum: 2 }).catch((e) => e);
    expect(error).toBeInstanceOf(PausepointError);
    expect(error).toMatchObject({ status: 400 });
    expect(JSON.stringify(error.details)).toMatch(/quorum/);
  });
});

describe('ask with reviewers', () => {
  it('resolves once the quorum agrees, with who decided and every vote', async () => {
    const outcome: Outcome = await client.ask(
      {
        title: 'Ship the migration?',
        allow_text: true,
        reviewers: [
          { email: 'ana@example.com', name: 'Ana' },
          { email: 'bo@example.com' },
          { email: 'cy@example.com' },
        ],
        quorum: 2,
      },
      {
        onCreated: (pause) =>
          void (async () => {
            const first = await vote(reviewerOf(pause, 'ana@example.com'), 'approve', 'looks fine');
            // Undecided after one of two votes.
            expect(first).toMatchObject({ status: 'pending', choice: null, your_vote: { choice: 'approve' } });
            const second = await vote(reviewerOf(pause, 'bo@example.com'), 'approve');
            expect(second).toMatchObject({ status: 'responded', choice: 'approve' });
          })(),
      },
    );
    const [ana, bo] = [reviewerOf(outcome.pause, 'ana@example.com'), reviewerOf(outcome.pause, 'bo@example.com')];
    expect(outcome).toMatchObject({
      status: 'responded',
      choice: 'approve',
      responded_by: { id: bo.id, email: 'bo@example.com', name: null },
    });
    const votes: Vote[] = outcome.votes;
    expect(votes).toEqual([
      {
        reviewer_id: ana.id,
        email: 'ana@example.com',
        choice: 'approve',
        text: 'looks fine',
        values: null,
        voted_at: expect.any(String),
      },
      {
        reviewer_id: bo.id,
        email: 'bo@example.com',
        choice: 'approve',
        text: null,
        values: null,
        voted_at: expect.any(String),
      },
    ]);
    expect(outcome.pause.response).toMatchObject({ responded_by: outcome.responded_by, votes });
    expect(reviewerOf(outcome.pause, 'cy@example.com').vote).toBeNull();
  });

  it('resolves at the first vote for a veto option', async () => {
    const outcome = await client.ask(
      {
        title: 'Rotate the production keys?',
        reviewers: [{ email: 'ana@example.com' }, { email: 'bo@example.com' }],
        quorum: 2,
        veto: ['reject'],
      },
      { onCreated: (pause) => void vote(reviewerOf(pause, 'bo@example.com'), 'reject') },
    );
    expect(outcome).toMatchObject({ status: 'responded', choice: 'reject', responded_by: { email: 'bo@example.com' } });
    expect(outcome.votes.map((v) => [v.email, v.choice])).toEqual([['bo@example.com', 'reject']]);
  });

  it('keeps the votes cast before a timeout or a cancel, with nobody deciding', async () => {
    let voted!: Promise<unknown>;
    const timedOut = await client.ask(
      {
        title: 'Nobody agrees in time?',
        expires_in: 2,
        timeout_default: 'reject',
        reviewers: [{ email: 'ana@example.com' }, { email: 'bo@example.com' }],
        quorum: 2,
      },
      {
        onCreated: (pause) => {
          voted = vote(reviewerOf(pause, 'ana@example.com'), 'approve');
        },
      },
    );
    await voted;
    expect(timedOut).toMatchObject({ status: 'timed_out', choice: 'reject', responded_by: null });
    expect(timedOut.votes.map((v) => [v.email, v.choice])).toEqual([['ana@example.com', 'approve']]);

    const pause = await client.pauses.create({
      title: 'Cancelled after a vote?',
      reviewers: [{ email: 'ana@example.com' }, { email: 'bo@example.com' }],
      quorum: 2,
    });
    await vote(reviewerOf(pause, 'bo@example.com'), 'reject');
    const outcome = outcomeOf(await client.pauses.cancel(pause.id));
    expect(outcome).toMatchObject({ status: 'cancelled', choice: null, responded_by: null });
    expect(outcome.votes.map((v) => [v.email, v.choice])).toEqual([['bo@example.com', 'reject']]);
  });

  it('an outcome without reviewers has no responded_by and no votes', async () => {
    const outcome = await client.ask(
      { title: 'Plain answer?' },
      {
        onCreated: (pause) =>
          void call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
            body: { choice: 'approve' },
          }),
      },
    );
    expect(outcome).toMatchObject({ status: 'responded', choice: 'approve', responded_by: null, votes: [] });
  });
});

describe('timeline', () => {
  it('lists who did what and when, from creation to the outcome', async () => {
    const pause = await client.pauses.create({
      title: 'Audit me?',
      reviewers: [{ email: 'ana@example.com' }, { email: 'bo@example.com' }],
      quorum: 2,
    });
    await vote(reviewerOf(pause, 'ana@example.com'), 'approve');
    await vote(reviewerOf(pause, 'bo@example.com'), 'approve');
    const timeline = await client.pauses.timeline(pause.id);
    expect(timeline).toMatchObject({ object: 'list', has_more: false });
    const entries: TimelineEntry[] = timeline.data;
    const types = entries.map((entry) => entry.type);
    expect(types[0]).toBe('created');
    expect(types.filter((type) => type === 'voted')).toHaveLength(2);
    expect(types.at(-1)).toBe('responded');
    expect(entries[0]!.actor.type).toBe('developer');
    const voted = entries.filter((entry) => entry.type === 'voted');
    expect(voted.map((entry) => entry.actor)).toEqual([
      { type: 'reviewer', email: 'ana@example.com' },
      { type: 'reviewer', email: 'bo@example.com' },
    ]);
    // In time order.
    const times = entries.map((entry) => Date.parse(entry.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const missing = await client.pauses.timeline('pause_01m8000000000000000000000').catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('pause.voted', () => {
  it('is delivered to a webhook that subscribes to it, and parses typed', async () => {
    const webhook = await client.webhooks.create({
      url: `${webhooks.receiver.url}/voted`,
      events: ['pause.voted', 'pause.responded'],
      secret: SECRET,
    });
    try {
      const pause = await client.pauses.create({
        title: 'Tell me each vote?',
        allow_text: true,
        reviewers: [{ email: 'ana@example.com', name: 'Ana' }, { email: 'bo@example.com' }],
        quorum: 2,
        metadata: { change: 42 },
      });
      await vote(reviewerOf(pause, 'ana@example.com'), 'approve', 'ok');
      await vote(reviewerOf(pause, 'bo@example.com'), 'approve');
      const requests = await webhooks.receiver.waitForRequests(3);
      const events: WebhookEvent[] = [];
      for (const request of requests) {
        events.push(await parseWebhookEvent(request.body, request.headers['x-service-signature'], SECRET));
      }
      const votedEvents = events.filter((event) => event.event === 'pause.voted');
      expect(votedEvents).toHaveLength(2);
      const first = votedEvents.find((event) => event.event === 'pause.voted' && event.data.reviewer.name === 'Ana');
      if (first?.event !== 'pause.voted') throw new Error('no vote by Ana');
      // Narrowed by the union: the reviewer and the count are typed.
      const count: number = first.data.votes_so_far;
      expect(first).toMatchObject({
        pause_id: pause.id,
        data: {
          reviewer: { id: reviewerOf(pause, 'ana@example.com').id, email: 'ana@example.com', name: 'Ana' },
          choice: 'approve',
          text: 'ok',
          voted_at: expect.any(String),
          metadata: { change: 42 },
        },
      });
      expect(count).toBeGreaterThanOrEqual(1);
      const responded = events.find((event) => event.event === 'pause.responded');
      if (responded?.event !== 'pause.responded') throw new Error('no pause.responded');
      expect(responded.data.responded_by).toMatchObject({ email: 'bo@example.com' });
      expect(responded.data.votes?.map((v) => v.email)).toEqual(['ana@example.com', 'bo@example.com']);
    } finally {
      await client.webhooks.delete(webhook.id);
    }
  });
});
