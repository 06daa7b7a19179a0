import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, sleep } from '../../helpers/pauses.js';
import { startTwoInstances, type TestService, type TwoInstances } from '../../helpers/service.js';
import {
  castVote,
  checkVotes,
  type Reviewer,
  reviewerList,
  seededRandom,
  shuffled,
  type VoteAttempt,
} from '../../helpers/votes.js';

// Two instances of the service on one PostgreSQL database, reviewers' votes
// on the same pause arriving at both at once. Each instance decides in its
// own transactions; only the lock on the pause row orders them. The same
// invariants as on one instance (test/helpers/votes.ts): one outcome, one
// event, every 200 counted everywhere, every refusal for its reason, the
// outcome what a sequential replay of the counted votes decides. (Only the
// PostgreSQL run includes this folder.)

let instances: TwoInstances;
let first: TestService;
let second: TestService;
let alice: Account;

beforeAll(async () => {
  instances = await startTwoInstances();
  ({ first, second } = instances);
  alice = await registerAccount(first.url);
});
afterAll(() => instances?.destroy());

const seed = Date.now() >>> 0;
/** Reviewer i votes through the first instance when i is even, the second when odd. */
const instanceFor = (pause: { reviewers: Reviewer[] }, reviewer: Reviewer) =>
  pause.reviewers.indexOf(reviewer) % 2 === 0 ? first : second;

it('20 reviewers split across two instances, quorum 3, all at once: one outcome, one event, every vote accounted for', async () => {
  const random = seededRandom(seed);
  for (let round = 0; round < 6; round++) {
    const options = round % 2 === 0 ? ['approve', 'reject'] : ['approve', 'reject', 'later'];
    const pause = await createPause(first.url, alice.test, { options, reviewers: reviewerList(20), quorum: 3 });
    const attempts = await Promise.all(
      shuffled(pause.reviewers as Reviewer[], random).map((reviewer) =>
        castVote(instanceFor(pause, reviewer).url, reviewer, options[Math.floor(random() * options.length)] as string),
      ),
    );
    const { pause: final, counted } = await checkVotes(first, alice.test, pause.id, attempts, {
      context: { seed, round },
    });
    expect(final.status).toBe('responded');
    expect(counted.filter((v) => v.choice === final.response.choice)).toHaveLength(3);
    for (const a of attempts.filter((a) => a.reply.status !== 200)) {
      expect(a.reply.body.error.code).toBe('already_responded');
    }
    // Both instances tell the same outcome.
    const onSecond = await call(second.url, 'GET', `/v1/pause/${pause.id}`, { token: alice.test });
    expect(onSecond.body.response).toEqual(final.response);
  }
}, 60_000);

it('a veto on one instance racing approvals on both: one outcome, one event', async () => {
  const random = seededRandom(seed + 1);
  for (let round = 0; round < 6; round++) {
    const pause = await createPause(first.url, alice.test, {
      reviewers: reviewerList(8),
      quorum: 2,
      veto: ['reject'],
    });
    const reviewers = pause.reviewers as Reviewer[];
    const rejecter = reviewers[Math.floor(random() * reviewers.length)] as Reviewer;
    const attempts = await Promise.all(
      shuffled(reviewers, random).map((reviewer) =>
        castVote(instanceFor(pause, reviewer).url, reviewer, reviewer === rejecter ? 'reject' : 'approve'),
      ),
    );
    const { pause: final } = await checkVotes(first, alice.test, pause.id, attempts, { context: { seed, round } });
    const reject = attempts.find((a) => a.choice === 'reject') as VoteAttempt;
    expect(final.response.choice).toBe(reject.reply.status === 200 ? 'reject' : 'approve');
  }
}, 60_000);

it('votes on both instances racing a cancel: one terminal state, one event, no vote counted after it', async () => {
  const random = seededRandom(seed + 2);
  for (let round = 0; round < 6; round++) {
    const pause = await createPause(first.url, alice.test, { reviewers: reviewerList(10), quorum: 3 });
    const via = random() < 0.5 ? first : second;
    const cancel = sleep(Math.floor(random() * 21)).then(() =>
      call(via.url, 'DELETE', `/v1/pause/${pause.id}`, { token: alice.test }),
    );
    const [attempts, cancelled] = await Promise.all([
      Promise.all(
        shuffled(pause.reviewers as Reviewer[], random).map((reviewer) =>
          castVote(instanceFor(pause, reviewer).url, reviewer, random() < 0.5 ? 'approve' : 'reject'),
        ),
      ),
      cancel,
    ]);
    const { pause: final } = await checkVotes(first, alice.test, pause.id, attempts, {
      cancels: [cancelled],
      context: { seed, round },
    });
    expect(['cancelled', 'responded']).toContain(final.status);
  }
}, 60_000);

it('the same reviewer voting ten times across both instances: one vote', async () => {
  const pause = await createPause(first.url, alice.test, { reviewers: reviewerList(3), quorum: 2 });
  const [ann] = pause.reviewers as Reviewer[];
  const attempts = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      castVote((i % 2 === 0 ? first : second).url, ann as Reviewer, i % 3 === 0 ? 'reject' : 'approve'),
    ),
  );
  const { counted } = await checkVotes(first, alice.test, pause.id, attempts);
  expect(counted).toHaveLength(1);
  const refused = attempts.filter((a) => a.reply.status !== 200);
  expect(refused).toHaveLength(9);
  for (const a of refused) expect(a.reply.body.error.code).toBe('already_voted');
});
