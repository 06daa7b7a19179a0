import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, type Reply, registerAccount } from '../helpers/http.js';
import { createPause, sleep } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { castVote, checkVotes, type Reviewer, reviewerList, type VoteAttempt } from '../helpers/votes.js';

// Random interleavings of reviewers' votes (and now and then the owner's
// cancel) on one pause, on whichever engine this run is for: any number of
// reviewers (2–20), any quorum, any veto set, and a sequence of vote groups,
// each group sent at once with small random delays, the groups one after
// another. Whatever the interleaving: one outcome with one event, every 200
// counted everywhere and nothing else, every refusal for its reason, and the
// outcome the one a sequential replay of the counted votes (in voted_at order)
// decides by the rule in src/domain/votes.ts, at the last vote counted
// (test/helpers/votes.ts checks all that). Besides, a group's votes are
// counted after every earlier group's, and none after the pause was decided.

let service: TestService;
let alice: Account;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

const OPTION_POOL = ['approve', 'reject', 'later'];

interface Ballot {
  /** Which reviewer votes: the same one may vote more than once, in a group or across groups. */
  reviewer: number;
  option: number;
  /** ms after its group starts. */
  delay: number;
}

interface Scenario {
  reviewers: number;
  options: string[];
  quorum: number;
  veto: string[];
  groups: Ballot[][];
  /** The owner's cancel, sent with one of the groups, or none. */
  cancel: { group: number; delay: number } | null;
}

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    reviewers: fc.integer({ min: 2, max: 20 }),
    options: fc.uniqueArray(fc.constantFrom(...OPTION_POOL), { minLength: 2, maxLength: 3 }),
  })
  .chain(({ reviewers, options }) =>
    fc.record({
      reviewers: fc.constant(reviewers),
      options: fc.constant(options),
      quorum: fc.oneof(fc.integer({ min: 1, max: Math.min(reviewers, 4) }), fc.integer({ min: 1, max: reviewers })),
      veto: fc.oneof(fc.constant<string[]>([]), fc.subarray(options, { maxLength: options.length - 1 })),
      groups: fc.array(
        fc.array(
          fc.record({
            reviewer: fc.nat(reviewers - 1),
            option: fc.nat(options.length - 1),
            delay: fc.oneof(fc.constant(0), fc.nat(6)),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        { minLength: 1, maxLength: 5 },
      ),
      cancel: fc.option(fc.record({ group: fc.nat(4), delay: fc.nat(6) }), { freq: 4, nil: null }),
    }),
  );

async function run(s: Scenario): Promise<void> {
  const pause = await createPause(service.url, alice.test, {
    options: s.options,
    reviewers: reviewerList(s.reviewers),
    quorum: s.quorum,
    ...(s.veto.length > 0 ? { veto: s.veto } : {}),
  });
  const reviewers = pause.reviewers as Reviewer[];
  const attempts: VoteAttempt[] = [];
  const groupOf = new Map<VoteAttempt, number>();
  const cancels: Reply[] = [];
  const lastGroup = s.groups.length - 1;
  for (const [index, group] of s.groups.entries()) {
    const sends: Promise<unknown>[] = group.map(async (ballot) => {
      await sleep(ballot.delay);
      const attempt = await castVote(
        service.url,
        reviewers[ballot.reviewer] as Reviewer,
        s.options[ballot.option] as string,
      );
      attempts.push(attempt);
      groupOf.set(attempt, index);
    });
    if (s.cancel && Math.min(s.cancel.group, lastGroup) === index) {
      const { delay } = s.cancel;
      sends.push(
        sleep(delay).then(async () => {
          cancels.push(await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: alice.test }));
        }),
      );
    }
    await Promise.all(sends);
  }

  const context = { scenario: s };
  const { counted } = await checkVotes(service, alice.test, pause.id, attempts, { cancels, context });

  // The groups were sent one after another: each group's votes are counted after every earlier group's.
  const position = new Map(counted.map((v) => [v.reviewerId, v.position]));
  const accepted = attempts.filter((a) => a.reply.status === 200);
  for (const a of accepted) {
    for (const b of accepted) {
      if ((groupOf.get(a) as number) < (groupOf.get(b) as number)) {
        expect(position.get(a.reviewer.id) as number, JSON.stringify(context)).toBeLessThan(
          position.get(b.reviewer.id) as number,
        );
      }
    }
  }
  // Once a group has ended with the pause decided or closed, no later group counts anything.
  const closedAfter = attempts
    .filter((a) => a.reply.status !== 200 && a.reply.body?.error?.code !== 'already_voted')
    .map((a) => groupOf.get(a) as number);
  const firstClosed = Math.min(...closedAfter);
  for (const a of accepted) expect(groupOf.get(a) as number, JSON.stringify(context)).toBeLessThanOrEqual(firstClosed);
}

describe('reviewers voting in random interleavings', () => {
  it('one outcome, one event, every vote accounted for, the outcome a sequential replay decides', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, (s) => run(s)),
      // Shrinking would replay real-time scenarios past the timeout and hide the failure.
      { numRuns: 60, endOnFailure: true },
    );
  }, 180_000);
});
