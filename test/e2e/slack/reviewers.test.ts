import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventsOf, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type PostedMessage, type SlackStandin, startSlackStandin } from '../../helpers/slack-standin.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// Reviewers with deliver: ["slack"]: each a direct message with their own
// buttons, found by email; a click votes through the page's action (quorum,
// veto, one vote each); a stranger's click records nothing; a reviewer Slack
// does not know is emailed; every message is updated when the pause closes.

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

let slack: SlackStandin;
let smtp: SmtpReceiver;
let service: TestService;
let dev: Account;

const ANN = { id: 'U0ANN', email: 'ann@example.com', name: 'Ann Example' };
const BOB = { id: 'U0BOB', email: 'bob@example.com', name: 'Bob Example' };
const EVE = { id: 'U0EVE', email: 'eve@example.com', name: 'Eve Outsider' };
// Slack users the service must not trust with a reviewer's buttons.
const UNCONFIRMED = { id: 'U0UNC', email: 'unc@example.com', name: 'Una Confirmed', emailConfirmed: false };
const DEACTIVATED = { id: 'U0DEL', email: 'del@example.com', name: 'Del Gone', deleted: true };
const EXTERNAL = { id: 'U0EXT', email: 'ext@example.com', name: 'Ext Partner', isStranger: true, teamId: 'T0OTHER' };
// Same email as Ann, another Slack user (added after Ann: users.lookupByEmail finds Ann).
const MALLORY = { id: 'U0MAL', email: ANN.email, name: 'Mallory' };

beforeAll(async () => {
  slack = await startSlackStandin();
  for (const user of [ANN, BOB, EVE, UNCONFIRMED, DEACTIVATED, EXTERNAL, MALLORY]) slack.addUser(user);
  smtp = await startSmtpReceiver();
  service = await startTestService({
    clock,
    env: {
      ...slack.env('http'),
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'pausepoint <approvals@example.com>',
      WEBHOOK_RETRY_SCHEDULE_MS: '200,400,600',
    },
  });
  dev = await registerAccount(service.url);
});
afterAll(async () => {
  await service?.destroy();
  await slack?.close();
  await smtp?.close();
});

const readPause = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: dev.live })).body;
const ephemeralsTo = (user: string) => slack.ephemeralsTo(user);

/** The direct message a reviewer was sent about this pause. */
async function dmOf(user: { id: string }, title: string): Promise<PostedMessage> {
  let found: PostedMessage | undefined;
  await eventually(() => {
    found = slack.messages.find((m) => m.channel === `D${user.id.slice(1)}` && m.text.includes(title));
    expect(found).toBeDefined();
  });
  return found!;
}

const title = (what: string) => `${what} ${Math.random().toString(36).slice(2, 8)}`;
const lastUpdate = (message: PostedMessage) => JSON.stringify(message.updates.at(-1)?.blocks ?? null);

describe('reviewers in Slack', () => {
  it('two reviewers and a quorum of two: each their own DM, votes counted once each, then both messages updated', async () => {
    const asked = title('Refund order');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      options: ['approve', 'reject'],
      reviewers: [
        { email: ANN.email, name: 'Ann' },
        { email: BOB.email, name: 'Bob' },
      ],
      quorum: 2,
      deliver: ['slack'],
    });
    const ann = await dmOf(ANN, asked);
    const bob = await dmOf(BOB, asked);
    expect(JSON.stringify(ann.blocks)).toContain('You are one of 2 reviewers; 2 must give the same answer.');
    expect(smtp.mails.filter((m) => m.raw.includes(asked))).toHaveLength(0); // Slack only: no email

    expect((await slack.click(service.url, ann, 'approve', ANN.id)).status).toBe(200);
    await eventually(() =>
      expect(ephemeralsTo(ANN.id)).toContain('Your vote (approve) is counted; the question waits for more votes.'),
    );
    // A double click: the same reviewer's second vote is refused by the vote's own rule.
    expect((await slack.click(service.url, ann, 'reject', ANN.id)).status).toBe(200);
    await eventually(() =>
      expect(ephemeralsTo(ANN.id)).toContain('You have already voted on this question. Nothing was recorded.'),
    );
    // Someone who is not a named reviewer (clicking Ann's message, say forwarded): nothing recorded.
    expect((await slack.click(service.url, ann, 'reject', EVE.id)).status).toBe(200);
    await eventually(() =>
      expect(ephemeralsTo(EVE.id)).toContain(
        'Only the named reviewers of this question can answer it; nothing was recorded.',
      ),
    );
    let read = await readPause(pause.id);
    expect(read.status).toBe('pending');
    expect(read.reviewers.map((r: any) => r.vote?.choice ?? null)).toEqual(['approve', null]);

    expect((await slack.click(service.url, bob, 'approve', BOB.id)).status).toBe(200);
    await eventually(async () => {
      read = await readPause(pause.id);
      expect(read.status).toBe('responded');
    });
    expect(read.response.responded_by).toMatchObject({ email: BOB.email, name: 'Bob' });
    expect(read.response.votes.map((v: any) => [v.email, v.choice])).toEqual([
      [ANN.email, 'approve'],
      [BOB.email, 'approve'],
    ]);
    // Bob is told after the vote is recorded: waited for here, so it cannot arrive during the next test.
    await eventually(() => expect(ephemeralsTo(BOB.id)).toContain('Recorded: approve. The question is decided.'));
    for (const message of [ann, bob]) {
      await eventually(() => {
        expect(lastUpdate(message)).toContain('Decided: approve (by Bob)');
        expect(lastUpdate(message)).toContain('Votes:\\nAnn: approve\\nBob: approve');
      });
    }
  });

  it('two reviewers clicking at the same moment: one decides, the other is told, one outcome', async () => {
    const asked = title('Race');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      reviewers: [
        { email: ANN.email, name: 'Ann' },
        { email: BOB.email, name: 'Bob' },
      ],
      deliver: ['slack'],
    });
    const [ann, bob] = [await dmOf(ANN, asked), await dmOf(BOB, asked)];
    // What each is told from now on (a message of an earlier test arriving late is not theirs to count).
    const [annBefore, bobBefore] = [ephemeralsTo(ANN.id).length, ephemeralsTo(BOB.id).length];
    const told = () => [...ephemeralsTo(ANN.id).slice(annBefore), ...ephemeralsTo(BOB.id).slice(bobBefore)];
    const clicks = await Promise.all([
      slack.click(service.url, ann, 'approve', ANN.id),
      slack.click(service.url, bob, 'reject', BOB.id),
    ]);
    expect(clicks.map((c) => c.status)).toEqual([200, 200]);
    await eventually(() => {
      const decided = [
        ...ephemeralsTo(ANN.id)
          .slice(annBefore)
          .filter((t) => t === 'Recorded: approve. The question is decided.'),
        ...ephemeralsTo(BOB.id)
          .slice(bobBefore)
          .filter((t) => t === 'Recorded: reject. The question is decided.'),
      ];
      expect(decided).toHaveLength(1);
      expect(told().filter((t) => t.startsWith('This pause has already been answered.'))).toHaveLength(1);
    });
    const read = await readPause(pause.id);
    expect(read.response.votes).toHaveLength(1);
    expect(read.response.votes[0].choice).toBe(read.response.choice);
    const events = await eventsOf(service, pause.id);
    expect(events.filter((e) => e.type === 'pause.responded')).toHaveLength(1);
  });

  it('a veto decides at once', async () => {
    const asked = title('Delete branch');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      reviewers: [{ email: ANN.email }, { email: BOB.email }],
      quorum: 2,
      veto: ['reject'],
      deliver: ['slack'],
    });
    const bob = await dmOf(BOB, asked);
    await slack.click(service.url, bob, 'reject', BOB.id);
    await eventually(async () => expect((await readPause(pause.id)).response?.choice).toBe('reject'));
    await eventually(() => expect(ephemeralsTo(BOB.id)).toContain('Recorded: reject. The question is decided.'));
  });

  it('a reviewer Slack does not know is emailed instead, and the timeline says so', async () => {
    const asked = title('Rotate keys');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      reviewers: [{ email: ANN.email }, { email: 'cy@example.com', name: 'Cy' }],
      deliver: ['slack'],
    });
    await dmOf(ANN, asked);
    await eventually(() =>
      expect(smtp.mails.filter((m) => m.raw.includes(asked)).map((m) => m.to)).toEqual([['cy@example.com']]),
    );
    const timeline = (await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: dev.live })).body;
    const failed = timeline.data.find((e: any) => e.type === 'notification_failed');
    expect(failed.detail).toMatchObject({
      channel: 'slack',
      to: 'cy@example.com',
      error: 'cy@example.com is not in this Slack workspace; emailed instead',
    });
    await eventually(async () => {
      const again = (await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: dev.live })).body;
      const notified = again.data
        .filter((e: any) => e.type === 'notified')
        .map((e: any) => [e.detail.channel, e.detail.to]);
      expect(notified).toEqual(
        expect.arrayContaining([
          ['slack', ANN.email],
          ['email', 'cy@example.com'],
        ]),
      );
    });
  });

  it('a reviewer Slack does not vouch for (unconfirmed, deactivated, external) is emailed instead, the timeline says why', async () => {
    const asked = title('Untrusted');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      reviewers: [{ email: UNCONFIRMED.email }, { email: DEACTIVATED.email }, { email: EXTERNAL.email }],
      deliver: ['slack'],
    });
    await eventually(() =>
      expect(
        smtp.mails
          .filter((m) => m.raw.includes(asked))
          .flatMap((m) => m.to)
          .sort(),
      ).toEqual([DEACTIVATED.email, EXTERNAL.email, UNCONFIRMED.email]),
    );
    expect(slack.messages.filter((m) => m.text.includes(asked))).toHaveLength(0);
    const timeline = (await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: dev.live })).body;
    const errors = timeline.data
      .filter((e: any) => e.type === 'notification_failed')
      .map((e: any) => e.detail.error)
      .sort();
    expect(errors).toEqual([
      'del@example.com is deactivated in Slack; emailed instead',
      'ext@example.com is an external (Slack Connect) user; emailed instead',
      'unc@example.com has not confirmed their email in Slack; emailed instead',
    ]);
  });

  it("only the Slack user a reviewer's message was sent to answers with it, not another with the same email", async () => {
    const asked = title('Same email');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      reviewers: [{ email: ANN.email }, { email: BOB.email }],
      deliver: ['slack'],
    });
    const ann = await dmOf(ANN, asked);
    expect((await slack.click(service.url, ann, 'approve', MALLORY.id)).status).toBe(200);
    await eventually(() =>
      expect(ephemeralsTo(MALLORY.id)).toContain(
        'Only the named reviewers of this question can answer it; nothing was recorded.',
      ),
    );
    expect((await readPause(pause.id)).status).toBe('pending');
    await slack.click(service.url, ann, 'approve', ANN.id);
    await eventually(async () => expect((await readPause(pause.id)).response?.choice).toBe('approve'));
  });

  it('a cancel and an expiry update every message about the pause', async () => {
    const cancelledTitle = title('Cancelled question');
    const cancelled = await createPause(service.url, dev.live, {
      title: cancelledTitle,
      reviewers: [{ email: ANN.email }, { email: BOB.email }],
      deliver: ['email', 'slack'],
    });
    const messages = [await dmOf(ANN, cancelledTitle), await dmOf(BOB, cancelledTitle)];
    expect((await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.live })).status).toBe(200);
    for (const message of messages)
      await eventually(() =>
        expect(lastUpdate(message)).toContain('Cancelled: this question no longer needs an answer'),
      );
    // A click on a closed question records nothing and says why.
    await slack.click(service.url, messages[0]!, 'approve', ANN.id);
    await eventually(() =>
      expect(ephemeralsTo(ANN.id)).toContain(
        'This pause has expired or was cancelled; it no longer takes answers. Nothing was recorded.',
      ),
    );

    const expiringTitle = title('Expiring question');
    const expiring = await createPause(service.url, dev.live, {
      title: expiringTitle,
      reviewers: [{ email: ANN.email }, { email: BOB.email }],
      quorum: 2,
      timeout_default: 'reject',
      expires_in: 600,
      deliver: ['slack'],
    });
    const ann = await dmOf(ANN, expiringTitle);
    await slack.click(service.url, ann, 'approve', ANN.id);
    await eventually(async () => expect((await readPause(expiring.id)).reviewers[0].vote?.choice).toBe('approve'));
    offsetMs += 601_000; // the service's clock (and its worker's) past the deadline
    await eventually(async () => expect((await readPause(expiring.id)).status).toBe('timed_out'));
    const bob = await dmOf(BOB, expiringTitle);
    for (const message of [ann, bob])
      await eventually(() => {
        expect(lastUpdate(message)).toContain('Timed out: reject (the default)');
        expect(lastUpdate(message)).toContain(`${ANN.email}: approve`);
      });
  });

  it('a question whose pause closes while it waits out a 429 is never posted, and nothing is left pending', async () => {
    const asked = title('Closed while rate limited');
    slack.rateLimit('chat.postMessage', 30);
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      notify: { slack: { channel: 'C0LIMITED' } },
      expires_in: 3600,
    });
    // Settled (attempts counts a claim; last_error comes with the 429's answer).
    await eventually(async () =>
      expect((await readPause(pause.id)).notifications[0]).toMatchObject({ attempts: 1, last_error: 'ratelimited' }),
    );
    expect((await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.live })).status).toBe(200);
    offsetMs += 31_000; // past Retry-After, on the service's clock
    await eventually(async () => {
      const read = await readPause(pause.id);
      expect(read.notifications[0]).toMatchObject({
        status: 'failed',
        last_error: 'the pause was closed before the question was posted; nothing was sent',
      });
      expect(read.notifications.filter((n: any) => n.status === 'pending')).toEqual([]);
    });
    const posts = slack.callsOf('chat.postMessage').filter((c) => String(c.args.text).includes(asked));
    expect(posts.map((c) => c.status)).toEqual([429]);
    expect(slack.messages.filter((m) => m.text.includes(asked))).toHaveLength(0);
  });

  it('reminders and escalation go the same way: Slack direct messages', async () => {
    const asked = title('Reminded question');
    const pause = await createPause(service.url, dev.live, {
      title: asked,
      reviewers: [{ email: ANN.email }],
      remind_every: 60,
      escalate: { after: 120, reviewers: [{ email: BOB.email, name: 'Bob' }] },
      expires_in: 3600,
      deliver: ['slack'],
    });
    await dmOf(ANN, asked);
    offsetMs += 61_000;
    await eventually(() =>
      expect(slack.messages.some((m) => m.text === `Reminder: decision needed: ${asked}`)).toBe(true),
    );
    offsetMs += 60_000;
    const bob = await dmOf(BOB, asked);
    expect(JSON.stringify(bob.blocks)).toContain('You are one of 2 reviewers; the first answer decides.');
    expect(smtp.mails.filter((m) => m.raw.includes(asked))).toHaveLength(0);
    // Signed at the service's time: its clock was moved on, and the signature's window follows it.
    const signed = await slack.click(service.url, bob, 'approve', BOB.id, {
      timestamp: Math.floor(clock.now().getTime() / 1000),
    });
    expect(signed.status).toBe(200);
    // The click is answered at once and handled after: what Bob was told, and what the service
    // logged as a warning or error, say why should the vote not be recorded.
    const why = () =>
      `told Bob: ${JSON.stringify(ephemeralsTo(BOB.id))}; logged: ${service.logs.filter((line) => /"level":[45]0/.test(line)).slice(-5)}`;
    await eventually(async () => expect((await readPause(pause.id)).status, why()).toBe('responded'), 10_000);
  });

  it('a click on a direct message counts even before the service has heard Slack answer the post', async () => {
    const asked = title('Clicked at once');
    const release = slack.holdAnswers('chat.postMessage');
    try {
      const pause = await createPause(service.url, dev.live, {
        title: asked,
        reviewers: [{ email: ANN.email, name: 'Ann' }],
        deliver: ['slack'],
      });
      // In Ann's Slack at once; the service still waits for chat.postMessage's answer.
      const ann = await dmOf(ANN, asked);
      // Signed at the service's time, which earlier tests moved on.
      const timestamp = Math.floor(clock.now().getTime() / 1000);
      const told = ephemeralsTo(ANN.id).length;
      expect((await slack.click(service.url, ann, 'approve', ANN.id, { timestamp })).status).toBe(200);
      await eventually(() =>
        expect(ephemeralsTo(ANN.id).slice(told)).toEqual(['Recorded: approve. The question is decided.']),
      );
      expect((await readPause(pause.id)).response).toMatchObject({ choice: 'approve', responded_by: { name: 'Ann' } });
    } finally {
      release();
    }
  });

  it('deliver needs reviewers, and names only known channels', async () => {
    const without = await call(service.url, 'POST', '/v1/pause', {
      token: dev.live,
      body: { title: 'x', deliver: ['slack'] },
    });
    expect(without.status).toBe(400);
    expect(without.body.error.details.fields).toContainEqual({ field: 'deliver', problem: 'needs reviewers' });
    const unknown = await call(service.url, 'POST', '/v1/pause', {
      token: dev.live,
      body: { title: 'x', reviewers: [{ email: ANN.email }], deliver: ['pager'] },
    });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body.error.details)).toContain('deliver');
  });
});
