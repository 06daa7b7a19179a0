import { expect } from 'vitest';
import { decides } from '../../src/domain/votes.js';
import { call, type Reply } from './http.js';
import { eventsOf, tokenOf } from './pauses.js';
import type { TestService } from './service.js';

// Reviewers' votes racing each other, a cancel and the expiry, and what must
// hold afterwards however they interleaved (issue 16): one outcome with one
// event; every vote that got a 200 counted everywhere (the pause, the
// timeline, the pause.voted events) and none other; each vote refused with
// the right error; and the outcome the one a sequential replay of the counted
// votes decides by the rule in src/domain/votes.ts, the deciding vote the
// last one counted. Used by test/e2e/reviewers/vote-races.test.ts, the property test and the
// two-instance test on PostgreSQL.

export interface Reviewer {
  id: string;
  email: string;
  response_url: string;
}

/** One POST /v1/respond/{token} a reviewer sent, and what came back. */
export interface VoteAttempt {
  reviewer: Reviewer;
  choice: string;
  reply: Reply;
}

/** `count` reviewers r0@…, r1@…: distinct addresses, made unique per call by `tag`. */
export const reviewerList = (count: number, tag = Math.random().toString(36).slice(2, 8)) =>
  Array.from({ length: count }, (_, i) => ({ email: `r${i}.${tag}@example.com`, name: `Reviewer ${i}` }));

/** A reviewer's vote through the API of the service at `baseUrl`. */
export async function castVote(baseUrl: string, reviewer: Reviewer, choice: string): Promise<VoteAttempt> {
  const reply = await call(baseUrl, 'POST', `/v1/respond/${tokenOf(reviewer)}`, { body: { choice } });
  return { reviewer, choice, reply };
}

/** A small seeded generator (mulberry32), so that a failing order can be told and run again. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

interface CountedVote {
  reviewerId: string;
  choice: string;
  votedAt: string;
  /** The position in which its transaction counted it (pause.voted's votes_so_far): the commit order. */
  position: number;
}

/** What a race left behind, for the tests that look further. */
export interface Settled {
  pause: any;
  timeline: any[];
  counted: CountedVote[];
}

/**
 * Checks every invariant of a pause whose votes (and cancels) have all been
 * answered. `cancels` are the replies to DELETE /v1/pause/{id} sent in the race.
 */
export async function checkVotes(
  service: TestService,
  key: string,
  pauseId: string,
  attempts: VoteAttempt[],
  options: { cancels?: Reply[]; context?: unknown } = {},
): Promise<Settled> {
  const cancels = options.cancels ?? [];
  const read = await call(service.url, 'GET', `/v1/pause/${pauseId}`, { token: key });
  const timelineReply = await call(service.url, 'GET', `/v1/pause/${pauseId}/timeline`, { token: key });
  const events = await eventsOf(service, pauseId);
  expect(read.status).toBe(200);
  expect(timelineReply.status).toBe(200);
  const pause = read.body;
  const timeline: any[] = timelineReply.body.data;
  const voted = events.filter((e) => e.type === 'pause.voted').map((e) => JSON.parse(e.payload).data);
  const outcomes = events.filter((e) => e.type !== 'pause.voted');
  const accepted = attempts.filter((a) => a.reply.status === 200);
  const context = JSON.stringify(
    {
      context: options.context,
      status: pause.status,
      response: pause.response && { ...pause.response, votes: pause.response.votes.length },
      attempts: attempts.map((a) => [
        a.reviewer.email.split('.')[0],
        a.choice,
        a.reply.status,
        a.reply.body?.error?.code ?? a.reply.body?.status,
        a.reply.body?.your_vote?.voted_at,
      ]),
      cancels: cancels.map((c) => [c.status, c.body?.error?.code ?? c.body?.status]),
      voted: voted.map((d) => [d.reviewer.email.split('.')[0], d.choice, d.votes_so_far, d.voted_at]),
      outcomes: outcomes.map((e) => [e.type, e.created_at]),
      timeline: timeline.map((t) => [t.type, t.at, t.actor.email?.split('.')[0]]),
    },
    null,
    1,
  );
  const rules = { quorum: pause.quorum as number, veto: pause.veto as string[] };
  const terminal = pause.status !== 'pending';

  // One terminal state, with exactly one terminal event, of its kind.
  expect(['pending', 'responded', 'cancelled', 'timed_out'], context).toContain(pause.status);
  expect(
    outcomes.map((e) => e.type),
    context,
  ).toEqual(terminal ? [`pause.${pause.status}`] : []);

  // Each reviewer counted at most once; every 200 says what it counted.
  const acceptedIds = accepted.map((a) => a.reviewer.id);
  expect(new Set(acceptedIds).size, context).toBe(acceptedIds.length);
  for (const a of accepted) expect(a.reply.body.your_vote?.choice, context).toBe(a.choice);
  const sorted = (ids: string[]) => [...ids].sort();

  // Every 200 is a stored vote, with the time its reply gave, and nothing else is.
  const stored = (pause.reviewers as any[]).filter((r) => r.vote !== null);
  expect(sorted(stored.map((r) => r.id)), context).toEqual(sorted(acceptedIds));
  for (const a of accepted) {
    const row = stored.find((r) => r.id === a.reviewer.id);
    expect(row.vote, context).toMatchObject({ choice: a.choice, voted_at: a.reply.body.your_vote.voted_at });
  }
  if (pause.status === 'responded') {
    expect(sorted(pause.response.votes.map((v: any) => v.reviewer_id)), context).toEqual(sorted(acceptedIds));
  }

  // ... and in the timeline, each once, none after the outcome.
  const timelineVotes = timeline.filter((t) => t.type === 'voted');
  expect(sorted(timelineVotes.map((t) => t.detail.reviewer_id)), context).toEqual(sorted(acceptedIds));
  const ends = timeline
    .map((t, index) => ({ type: t.type, index }))
    .filter((t) => ['responded', 'timed_out', 'cancelled'].includes(t.type));
  expect(
    ends.map((t) => t.type),
    context,
  ).toEqual(terminal ? [pause.status] : []);
  if (terminal) {
    const end = ends[0]?.index as number;
    expect(
      timeline.slice(end + 1).map((t) => t.type),
      context,
    ).not.toContain('voted');
  }

  // One pause.voted per 200, numbered 1…n in the order the votes were counted.
  expect(voted.length, context).toBe(accepted.length);
  expect(sorted(voted.map((d) => d.reviewer.id)), context).toEqual(sorted(acceptedIds));
  expect(
    voted.map((d) => d.votes_so_far).sort((a, b) => a - b),
    context,
  ).toEqual(accepted.map((_, i) => i + 1));
  const counted: CountedVote[] = voted
    .map((d) => ({ reviewerId: d.reviewer.id, choice: d.choice, votedAt: d.voted_at, position: d.votes_so_far }))
    .sort((a, b) => a.position - b.position);

  // The votes' times follow the order they were counted in: the record tells the order things happened.
  for (const [i, v] of counted.entries()) {
    if (i > 0) expect(v.votedAt >= (counted[i - 1] as CountedVote).votedAt, context).toBe(true);
  }

  // A sequential replay of the counted votes decides exactly what the race did, at its last vote.
  const byTime = [...counted].sort((a, b) => (a.votedAt < b.votedAt ? -1 : a.votedAt > b.votedAt ? 1 : 0));
  for (const order of [counted, byTime]) {
    const replay = replayVotes(rules, order);
    if (pause.status === 'responded') {
      expect(replay, context).toEqual({ decidedAt: order.length - 1, choice: pause.response.choice });
    } else {
      expect(replay, context).toBeNull();
    }
  }

  // The outcome: chosen by the last vote counted, with at least a quorum for it (or a veto), in time.
  const decider = counted.at(-1);
  const repliesSaidResponded = accepted.filter((a) => a.reply.body.status === 'responded');
  if (pause.status === 'responded') {
    const choice = pause.response.choice;
    const forIt = counted.filter((v) => v.choice === choice).length;
    expect(forIt >= rules.quorum || rules.veto.includes(choice), context).toBe(true);
    expect(pause.response.responded_by?.id, context).toBe(decider?.reviewerId);
    expect(pause.response.response_at, context).toBe(decider?.votedAt);
    expect(pause.response.response_at < pause.expires_at, context).toBe(true);
    expect(
      repliesSaidResponded.map((a) => a.reviewer.id),
      context,
    ).toEqual([decider?.reviewerId]);
    expect(repliesSaidResponded[0]?.reply.body, context).toMatchObject({
      status: 'responded',
      choice,
      response_at: pause.response.response_at,
    });
    const event = JSON.parse(outcomes[0]?.payload as string).data;
    expect(event.choice, context).toBe(choice);
    expect(event.responded_by?.id, context).toBe(decider?.reviewerId);
    expect(sorted(event.votes.map((v: any) => v.reviewer_id)), context).toEqual(sorted(acceptedIds));
  } else {
    expect(repliesSaidResponded, context).toHaveLength(0);
  }
  for (const a of accepted) {
    if (a.reply.body.status === 'pending') {
      expect(a.reply.body, context).toMatchObject({ choice: null, text: null, response_at: null });
    }
  }

  // Nothing counted after the pause closed.
  if (pause.status === 'timed_out') {
    for (const v of counted) expect(v.votedAt < pause.expires_at, context).toBe(true);
  }
  if (pause.status === 'cancelled') {
    const cancelledAt = outcomes[0]?.created_at as string;
    for (const v of counted) expect(v.votedAt <= cancelledAt, context).toBe(true);
  }

  // Every vote refused, refused for the right reason.
  for (const a of attempts) {
    if (a.reply.status === 200) continue;
    const code = a.reply.body?.error?.code;
    const votedBefore = acceptedIds.includes(a.reviewer.id);
    const allowed: string[] = [];
    if (votedBefore) allowed.push('already_voted');
    if (pause.status === 'responded') allowed.push('already_responded');
    if (pause.status === 'cancelled' || pause.status === 'timed_out') allowed.push('pause_closed');
    expect(allowed, context).toContain(code);
    expect(a.reply.status, context).toBe(code === 'pause_closed' ? 410 : 409);
  }

  // A cancel wins only as the outcome; otherwise it is told the pause no longer waits.
  const cancelled = cancels.filter((c) => c.status === 200);
  expect(cancelled.length, context).toBe(pause.status === 'cancelled' ? 1 : 0);
  for (const c of cancels) {
    if (c.status === 200) continue;
    expect(c.status, context).toBe(409);
    expect(c.body.error.code, context).toBe('pause_not_pending');
  }

  return { pause, timeline, counted };
}

/** The index of the vote that decides, and its choice, replaying `votes` one at a time; null if none does. */
export function replayVotes(
  rules: { quorum: number; veto: string[] },
  votes: readonly { choice: string }[],
): { decidedAt: number; choice: string } | null {
  const tally = new Map<string, number>();
  for (const [index, vote] of votes.entries()) {
    const count = (tally.get(vote.choice) ?? 0) + 1;
    tally.set(vote.choice, count);
    if (decides(rules, vote.choice, count)) return { decidedAt: index, choice: vote.choice };
  }
  return null;
}
