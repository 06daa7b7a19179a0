import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import {
  castVote,
  checkVotes,
  type Reviewer,
  reviewerList,
  seededRandom,
  shuffled,
  type VoteAttempt,
} from '../../helpers/votes.js';

// Reviewers' votes racing each other, a veto, a cancel and the expiry, on
// whichever engine this run is for. However they interleave, a pause has one
// outcome and one event, every vote that got a 200 is counted everywhere and
// decided nothing after the outcome, and every other vote is told why
// (test/helpers/votes.ts checks it all). Random interleavings: the property
// test test/property/reviewer-votes.test.ts; two instances on one PostgreSQL
// database: postgres-only/reviewer-two-instances.test.ts.

let service: TestService;
let alice: Account;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

/** Each round's order comes from a seed, printed with any failure so the round can be told again. */
const seed = Date.now() >>> 0;

const vote = (reviewer: Reviewer, choice: string) => castVote(service.url, reviewer, choice);
const settled = async (pauseId: string) => {
  await eventually(async () => {
    const read = await call(service.url, 'GET', `/v1/pause/${pauseId}`, { token: alice.test });
    expect(read.body.status).not.toBe('pending');
  }, 5000);
};

describe('reviewers voting at once', () => {
  it('20 reviewers, quorum 3, all at once in random order: one outcome, one event, every vote accounted for', async () => {
    const random = seededRandom(seed);
    for (let round = 0; round < 6; round++) {
      const options = round % 2 === 0 ? ['approve', 'reject'] : ['approve', 'reject', 'later'];
      const pause = await createPause(service.url, alice.test, {
        options,
        reviewers: reviewerList(20),
        quorum: 3,
      });
      const ballots = shuffled(pause.reviewers as Reviewer[], random).map((reviewer) => ({
        reviewer,
        choice: options[Math.floor(random() * options.length)] as string,
      }));
      const attempts = await Promise.all(ballots.map((b) => vote(b.reviewer, b.choice)));
      // With 20 votes over at most three options, some option reaches 3.
      const { pause: final, counted } = await checkVotes(service, alice.test, pause.id, attempts, {
        context: { seed, round },
      });
      expect(final.status).toBe('responded');
      expect(counted.filter((v) => v.choice === final.response.choice).length).toBe(3);
      expect(counted.length).toBeLessThanOrEqual(2 * (options.length - 1) + 3);
      const refused = attempts.filter((a) => a.reply.status !== 200);
      expect(refused.length).toBe(20 - counted.length);
      for (const a of refused) {
        expect(a.reply.status).toBe(409);
        expect(a.reply.body.error.code).toBe('already_responded');
      }
    }
  }, 60_000);

  it('a veto beats the quorum in a race: one outcome, one event, and a reject counted is the outcome', async () => {
    const random = seededRandom(seed + 1);
    for (let round = 0; round < 10; round++) {
      const pause = await createPause(service.url, alice.test, {
        reviewers: reviewerList(6),
        quorum: 2,
        veto: ['reject'],
      });
      const [first, ...others] = pause.reviewers as Reviewer[];
      // Half the rounds start with one approve already counted: then the reject races the second approve.
      const before: VoteAttempt[] = round % 2 === 0 ? [await vote(first as Reviewer, 'approve')] : [];
      const racing = round % 2 === 0 ? others : (pause.reviewers as Reviewer[]);
      const rejecter = racing[Math.floor(random() * racing.length)] as Reviewer;
      const ballots = shuffled(racing, random).map((reviewer) => ({
        reviewer,
        choice: reviewer === rejecter ? 'reject' : 'approve',
      }));
      const attempts = [...before, ...(await Promise.all(ballots.map((b) => vote(b.reviewer, b.choice))))];
      const { pause: final, counted } = await checkVotes(service, alice.test, pause.id, attempts, {
        context: { seed, round },
      });
      expect(final.status).toBe('responded');
      const reject = attempts.find((a) => a.choice === 'reject') as VoteAttempt;
      const approves = counted.filter((v) => v.choice === 'approve');
      if (reject.reply.status === 200) {
        // The reject was counted, so before the second approve was: it decided at once.
        expect(final.response.choice).toBe('reject');
        expect(approves.length).toBeLessThan(2);
      } else {
        // The second approve was counted first and decided; the reject came after the outcome.
        expect(final.response.choice).toBe('approve');
        expect(approves.length).toBe(2);
        expect(reject.reply.body.error.code).toBe('already_responded');
      }
    }
  }, 60_000);

  it('a reject counted before the second approve wins; a reject after the quorum is refused', async () => {
    const rejectFirst = await createPause(service.url, alice.test, {
      reviewers: reviewerList(4),
      quorum: 2,
      veto: ['reject'],
    });
    const [a, b, c, d] = rejectFirst.reviewers as Reviewer[];
    const attempts = [await vote(a as Reviewer, 'approve'), await vote(b as Reviewer, 'reject')];
    attempts.push(...(await Promise.all([vote(c as Reviewer, 'approve'), vote(d as Reviewer, 'approve')])));
    const { pause } = await checkVotes(service, alice.test, rejectFirst.id, attempts);
    expect(pause.response).toMatchObject({ choice: 'reject', responded_by: { id: b?.id } });

    const quorumFirst = await createPause(service.url, alice.test, {
      reviewers: reviewerList(4),
      quorum: 2,
      veto: ['reject'],
    });
    const [e, f, g] = quorumFirst.reviewers as Reviewer[];
    const later = [await vote(e as Reviewer, 'approve'), await vote(f as Reviewer, 'approve')];
    later.push(await vote(g as Reviewer, 'reject'));
    const decided = await checkVotes(service, alice.test, quorumFirst.id, later);
    expect(decided.pause.response).toMatchObject({ choice: 'approve', responded_by: { id: f?.id } });
    expect(later[2]?.reply.body.error.code).toBe('already_responded');
  });

  it('votes racing a cancel: one terminal state, one event, no vote counted after it', async () => {
    const random = seededRandom(seed + 2);
    for (let round = 0; round < 8; round++) {
      const pause = await createPause(service.url, alice.test, {
        reviewers: reviewerList(8),
        quorum: 3,
      });
      // All the votes at once, and the cancel among them: sent 0–20 ms after the first.
      const cancelAfter = Math.floor(random() * 21);
      const cancel = sleep(cancelAfter).then(() =>
        call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: alice.test }),
      );
      const ballots = shuffled(pause.reviewers as Reviewer[], random).map((reviewer) => ({
        reviewer,
        choice: random() < 0.5 ? 'approve' : 'reject',
      }));
      const [attempts, cancelled] = await Promise.all([
        Promise.all(ballots.map((b) => vote(b.reviewer, b.choice))),
        cancel,
      ]);
      const { pause: final } = await checkVotes(service, alice.test, pause.id, attempts, {
        cancels: [cancelled],
        context: { seed, round, cancelAfter },
      });
      expect(['cancelled', 'responded']).toContain(final.status);
    }
  }, 60_000);

  it('votes racing the expiry, sent right at the deadline: one terminal state, one event, no vote counted after it', async () => {
    const random = seededRandom(seed + 3);
    const pauses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        createPause(service.url, alice.test, {
          reviewers: reviewerList(10),
          quorum: i % 2 === 0 ? 10 : 4, // 10: the expiry ends it unless all ten agree in time; 4: the votes may win
          expires_in: 1,
          timeout_default: 'reject',
        }),
      ),
    );
    const attempts = new Map<string, Promise<VoteAttempt>[]>();
    for (const pause of pauses) {
      const deadline = Date.parse(pause.expires_at);
      attempts.set(
        pause.id,
        (pause.reviewers as Reviewer[]).map(async (reviewer) => {
          // Each vote lands within 60 ms either side of expires_at.
          await sleep(Math.max(0, deadline + Math.floor(random() * 120) - 60 - Date.now()));
          return vote(reviewer, random() < 0.5 ? 'approve' : 'reject');
        }),
      );
    }
    const sent = new Map<string, VoteAttempt[]>();
    for (const [id, votes] of attempts) sent.set(id, await Promise.all(votes));
    for (const pause of pauses) {
      await settled(pause.id);
      const { pause: final, counted } = await checkVotes(
        service,
        alice.test,
        pause.id,
        sent.get(pause.id) as VoteAttempt[],
        { context: { seed } },
      );
      expect(['timed_out', 'responded']).toContain(final.status);
      for (const v of counted) expect(v.votedAt < pause.expires_at).toBe(true);
      if (final.status === 'timed_out') {
        expect(final.response).toMatchObject({ choice: 'reject', response_at: pause.expires_at });
      }
    }
  }, 30_000);

  it('the same reviewer voting ten times at once: one 200, nine already_voted, one vote', async () => {
    for (let round = 0; round < 4; round++) {
      const pause = await createPause(service.url, alice.test, { reviewers: reviewerList(3), quorum: 2 });
      const [ann] = pause.reviewers as Reviewer[];
      const attempts = await Promise.all(
        Array.from({ length: 10 }, (_, i) => vote(ann as Reviewer, i % 2 === 0 ? 'approve' : 'reject')),
      );
      const { pause: final, counted } = await checkVotes(service, alice.test, pause.id, attempts, {
        context: { round },
      });
      expect(final.status).toBe('pending');
      expect(attempts.filter((a) => a.reply.status === 200)).toHaveLength(1);
      const refused = attempts.filter((a) => a.reply.status !== 200);
      expect(refused).toHaveLength(9);
      for (const a of refused) {
        expect(a.reply.status).toBe(409);
        expect(a.reply.body.error.code).toBe('already_voted');
      }
      expect(counted).toHaveLength(1);
      const winner = attempts.find((a) => a.reply.status === 200) as VoteAttempt;
      expect(final.reviewers[0].vote).toMatchObject({ choice: winner.choice });
    }
  });
});
