import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { freshDatabase } from '../../helpers/database.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type ReceivedMail, type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// Reviewers' emails, reminders and escalation, sent through the outbox to a
// real SMTP server. Reminders come at least 60 s apart (the API's minimum),
// so the service runs on a clock the test moves forward instead of waiting:
// the same clock the worker reads to find what is due, so moving it is all a
// reminder needs. (Votes themselves: test/e2e/reviewers/votes.test.ts; their races:
// test/e2e/reviewers/vote-races.test.ts.)

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
/** Moves the service's clock forward. */
const advance = (seconds: number) => {
  offsetMs += seconds * 1000;
};
/** Moves the service's clock forward to `seconds` after `from` (never back). */
const advanceTo = (from: string, seconds: number) => {
  offsetMs = Math.max(offsetMs, Date.parse(from) + seconds * 1000 - Date.now());
};
/** Runs the worker once: what is due at the clock's time now is followed up, and what that queued is sent. */
const settle = (target: TestService = service) => target.worker!.runOnce();

let smtp: SmtpReceiver;
let service: TestService;
let dev: Account;

const smtpEnv = () => ({ SMTP_URL: smtp.url, EMAIL_FROM: 'pausepoint <approvals@example.com>' });

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startTestService({ clock, env: smtpEnv() });
  dev = await registerAccount(service.url);
});
afterAll(async () => {
  await service?.destroy();
  await smtp?.close();
});

interface Reviewer {
  id: string;
  email: string;
  response_url: string;
  added_by: string;
}

let groups = 0;
/** Reviewers with addresses no other test uses, so each test reads only its own mail. */
function people(...names: string[]) {
  groups += 1;
  const emails = names.map((name) => `${name}@g${groups}.example.com`);
  return { emails, reviewers: emails.map((email) => ({ email })) };
}

const mailsTo = (emails: string[]) => smtp.mails.filter((mail) => emails.includes(mail.to[0] ?? ''));
const isReminder = (mail: ReceivedMail) => (mail.parsed.subject ?? '').startsWith('Reminder: decision needed: ');
const byRecipient = (mails: ReceivedMail[]) => mails.map((mail) => mail.to.join(',')).sort();

/**
 * Waits until these addresses have received `count` mails in all and the
 * worker has recorded them as sent, and returns them. A mail arrives before
 * its row is settled; moved past the claim's lease in that moment (the tests
 * move the clock by a minute), the row would fall due again and go twice.
 */
async function waitForMailsTo(emails: string[], count: number, timeoutMs = 5000): Promise<ReceivedMail[]> {
  await eventually(() => expect(mailsTo(emails).length).toBeGreaterThanOrEqual(count), timeoutMs);
  await settle();
  return mailsTo(emails);
}

/** Every response link in a mail (text and HTML) is the reviewer's own, and each option has its preselect link. */
function expectOwnLinks(mail: ReceivedMail, own: Reviewer, everyone: Reviewer[], options = ['approve', 'reject']) {
  expect(mail.to).toEqual([own.email]);
  const token = tokenOf(own);
  for (const body of [mail.parsed.text ?? '', String(mail.parsed.html)]) {
    const linked = new Set([...body.matchAll(/\/r\/([A-Za-z0-9_.-]+)/g)].map((match) => match[1]));
    expect([...linked]).toEqual([token]);
    for (const option of options) expect(body).toContain(`/r/${token}?choice=${option}`);
    for (const other of everyone.filter((r) => r.id !== own.id)) {
      expect(body).not.toContain(tokenOf(other));
      expect(body).not.toContain(other.id);
      expect(body).not.toContain(other.email);
    }
  }
}

const reviewerOf = (pause: { reviewers: Reviewer[] }, email: string) =>
  pause.reviewers.find((reviewer) => reviewer.email === email) as Reviewer;

const vote = (baseUrl: string, reviewer: Reviewer, choice: string) =>
  call(baseUrl, 'POST', `/v1/respond/${tokenOf(reviewer)}`, { body: { choice } });

const read = async (id: string, key = dev.live, baseUrl = service.url) =>
  (await call(baseUrl, 'GET', `/v1/pause/${id}`, { token: key })).body;

interface TimelineEntry {
  at: string;
  type: string;
  actor: { type: string; email?: string };
  detail: Record<string, unknown>;
}
async function timeline(id: string, key = dev.live, baseUrl = service.url): Promise<TimelineEntry[]> {
  const reply = await call(baseUrl, 'GET', `/v1/pause/${id}/timeline`, { token: key });
  expect(reply.status).toBe(200);
  return reply.body.data;
}
const remindedIn = (entries: TimelineEntry[]) =>
  entries.filter((entry) => entry.type === 'reminded').map((entry) => entry.detail.to as string);

/** The follow-up columns of a pause, as stored. */
const dueTimes = (target: TestService, id: string) =>
  target.store.db
    .selectFrom('pauses')
    .select(['remind_at', 'escalate_at', 'reminders_sent', 'escalated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

describe('the question', () => {
  it('emails each of three reviewers once, with their own link and preselect links only', async () => {
    const { emails, reviewers } = people('ann', 'bob', 'cy');
    const pause = await createPause(service.url, dev.live, {
      title: 'Rotate the production keys?',
      reviewers,
      quorum: 2,
      expires_in: 3600,
    });
    expect(pause.notifications).toHaveLength(3);
    const mails = await waitForMailsTo(emails, 3);
    await settle();
    expect(mailsTo(emails)).toHaveLength(3);
    expect(byRecipient(mails)).toEqual([...emails].sort());
    for (const mail of mails) {
      expect(mail.parsed.subject).toBe('Decision needed: Rotate the production keys?');
      expect(mail.parsed.text).toContain('You are one of 3 reviewers; 2 must give the same answer.');
      expectOwnLinks(mail, reviewerOf(pause, mail.to[0] ?? ''), pause.reviewers);
    }

    // The link in Bob's mail is Bob's: it shows him the question and no vote of his yet.
    const bob = reviewerOf(pause, emails[1] ?? '');
    const bobsMail = mails.find((mail) => mail.to[0] === bob.email) as ReceivedMail;
    const link = (bobsMail.parsed.text ?? '').match(/- approve: (\S+)/)?.[1] ?? '';
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You picked <strong>approve</strong>');
    const seen = await call(service.url, 'GET', `/v1/respond/${tokenOf(bob)}`);
    expect(seen.body).toMatchObject({ quorum: { needed: 2, reviewers: 3, votes_so_far: 0 }, your_vote: null });

    await eventually(async () => {
      const read1 = await read(pause.id);
      expect(read1.notifications.map((n: { status: string }) => n.status)).toEqual(['sent', 'sent', 'sent']);
    });
    const notified = (await timeline(pause.id)).filter((entry) => entry.type === 'notified');
    expect(notified.map((entry) => entry.detail.reviewer_id).sort()).toEqual(
      pause.reviewers.map((r: Reviewer) => r.id).sort(),
    );
    expect(notified.every((entry) => entry.detail.status === 'sent' && entry.detail.kind === 'question')).toBe(true);
  });
});

describe('reminders', () => {
  it('reminds only those who have not voted, at most remind_max times, each with their own link', async () => {
    const { emails, reviewers } = people('ann', 'bob', 'cy');
    const pause = await createPause(service.url, dev.live, {
      title: 'Drop the old table?',
      reviewers,
      quorum: 3,
      remind_every: 60,
      remind_max: 2,
      expires_in: 3600,
    });
    const [ann, bob, cy] = pause.reviewers as Reviewer[];
    await waitForMailsTo(emails, 3);
    expect((await vote(service.url, ann!, 'approve')).status).toBe(200);

    advance(60);
    const first = (await waitForMailsTo(emails, 5)).slice(3);
    expect(byRecipient(first)).toEqual([bob!.email, cy!.email]);
    for (const mail of first) {
      expect(isReminder(mail)).toBe(true);
      expect(mail.parsed.subject).toBe('Reminder: decision needed: Drop the old table?');
      expectOwnLinks(mail, reviewerOf(pause, mail.to[0] ?? ''), pause.reviewers);
    }
    expect((await vote(service.url, bob!, 'approve')).status).toBe(200);

    advance(60);
    const second = (await waitForMailsTo(emails, 6)).slice(5);
    expect(byRecipient(second)).toEqual([cy!.email]);
    expect(isReminder(second[0]!)).toBe(true);
    expectOwnLinks(second[0]!, cy!, pause.reviewers);

    // remind_max reached: no third reminder, however long nobody answers.
    advance(60);
    await settle();
    advance(60);
    await settle();
    expect(mailsTo(emails)).toHaveLength(6);
    expect(await dueTimes(service, pause.id)).toMatchObject({ remind_at: null, reminders_sent: 2 });

    const entries = await timeline(pause.id);
    expect(remindedIn(entries).sort()).toEqual([bob!.email, cy!.email, cy!.email]);
    const reminded = entries.filter((entry) => entry.type === 'reminded');
    expect(reminded.every((entry) => entry.actor.type === 'system' && entry.detail.kind === 'reminder')).toBe(true);
    expect(reminded.map((entry) => entry.detail.reviewer_id).sort()).toEqual([bob!.id, cy!.id, cy!.id].sort());
  });

  it('sends nothing once the outcome is decided', async () => {
    const { emails, reviewers } = people('ann', 'bob', 'cy');
    const pause = await createPause(service.url, dev.live, {
      reviewers,
      quorum: 2,
      remind_every: 60,
      remind_max: 5,
      expires_in: 3600,
    });
    const [ann, bob, cy] = pause.reviewers as Reviewer[];
    await waitForMailsTo(emails, 3);
    advance(60);
    const reminded = (await waitForMailsTo(emails, 6)).slice(3);
    expect(reminded.every(isReminder)).toBe(true);

    expect((await vote(service.url, ann!, 'approve')).body.status).toBe('pending');
    expect((await vote(service.url, bob!, 'approve')).body.status).toBe('responded');
    expect(await dueTimes(service, pause.id)).toMatchObject({ remind_at: null, reminders_sent: 1 });
    for (let i = 0; i < 3; i++) {
      advance(60);
      await settle();
    }
    expect(mailsTo(emails)).toHaveLength(6);
    expect(mailsTo([cy!.email])).toHaveLength(2);
    const entries = await timeline(pause.id);
    const decidedAt = entries.find((entry) => entry.type === 'responded')?.at ?? '';
    expect(entries.filter((entry) => entry.type === 'reminded' && entry.at > decidedAt)).toEqual([]);
    expect(remindedIn(entries)).toHaveLength(3);
  });

  it('after a gap longer than remind_every (an outage), sends one reminder, not one per missed interval', async () => {
    const { emails, reviewers } = people('ann', 'bob');
    const pause = await createPause(service.url, dev.live, {
      reviewers,
      remind_every: 60,
      remind_max: 3,
      expires_in: 3600,
    });
    await waitForMailsTo(emails, 2);
    // Three reminders' times pass before the worker sees any of them.
    advanceTo(pause.created_at, 185);
    await waitForMailsTo(emails, 4);
    await settle();
    expect(mailsTo(emails)).toHaveLength(4);
    const { remind_at, reminders_sent } = await dueTimes(service, pause.id);
    expect(reminders_sent).toBe(1);
    expect(Date.parse(remind_at ?? '')).toBeGreaterThan(clock.now().getTime() + 55_000);

    // Then on schedule again, up to remind_max.
    advance(60);
    await waitForMailsTo(emails, 6);
    advance(60);
    await waitForMailsTo(emails, 8);
    advance(60);
    await settle();
    expect(mailsTo(emails).filter(isReminder)).toHaveLength(6);
    expect(mailsTo(emails)).toHaveLength(8);
  });
});

describe('escalation', () => {
  it('adds the escalation reviewers after `after`, emails them their own links, and counts their votes', async () => {
    const { emails, reviewers } = people('ann', 'bob', 'dee', 'eve');
    const pause = await createPause(service.url, dev.live, {
      title: 'Pay the invoice?',
      reviewers: reviewers.slice(0, 2),
      quorum: 2,
      escalate: { after: 120, reviewers: [{ email: emails[2], name: 'Dee' }, { email: emails[3] }] },
      expires_in: 3600,
    });
    expect(pause.escalate).toMatchObject({ after: 120, escalated_at: null });
    const [ann] = pause.reviewers as Reviewer[];
    await waitForMailsTo(emails, 2);
    expect((await vote(service.url, ann!, 'approve')).body.status).toBe('pending');

    advanceTo(pause.created_at, 110); // and 1.5 s more while it settles: still before `after`
    await settle();
    expect(mailsTo(emails)).toHaveLength(2);
    expect((await read(pause.id)).reviewers).toHaveLength(2);

    advanceTo(pause.created_at, 120);
    const escalationMails = (await waitForMailsTo(emails, 4)).slice(2);
    const escalated = await read(pause.id);
    expect(escalated.status).toBe('pending');
    expect(escalated.escalate.escalated_at).toMatch(/Z$/);
    expect(escalated.reviewers.map((r: Reviewer) => [r.email, r.added_by])).toEqual([
      [emails[0], 'create'],
      [emails[1], 'create'],
      [emails[2], 'escalation'],
      [emails[3], 'escalation'],
    ]);
    expect(byRecipient(escalationMails)).toEqual([emails[2], emails[3]]);
    for (const mail of escalationMails) {
      expect(mail.parsed.subject).toBe('Decision needed: Pay the invoice?');
      expect(mail.parsed.text).toContain('You are one of 4 reviewers; 2 must give the same answer.');
      expectOwnLinks(mail, reviewerOf(escalated, mail.to[0] ?? ''), escalated.reviewers);
    }
    const dee = reviewerOf(escalated, emails[2] ?? '');
    const seen = await call(service.url, 'GET', `/v1/respond/${tokenOf(dee)}`);
    expect(seen.body.quorum).toEqual({ needed: 2, reviewers: 4, votes_so_far: 1 });

    // The escalated reviewer's vote is the second approval: it decides.
    const deciding = await vote(service.url, dee, 'approve');
    expect(deciding.body).toMatchObject({ status: 'responded', choice: 'approve' });
    const decided = await read(pause.id);
    expect(decided.response.responded_by).toEqual({ id: dee.id, email: dee.email, name: 'Dee' });
    expect(await dueTimes(service, pause.id)).toMatchObject({ escalate_at: null, escalated_at: expect.any(String) });

    const entries = await timeline(pause.id);
    const escalatedEntries = entries.filter((entry) => entry.type === 'escalated');
    expect(escalatedEntries).toHaveLength(1);
    expect(escalatedEntries[0]).toMatchObject({
      at: escalated.escalate.escalated_at,
      actor: { type: 'system' },
      detail: {
        reviewers: [
          { email: emails[2], name: 'Dee' },
          { email: emails[3], name: null },
        ],
      },
    });
    expect(entries.map((entry) => entry.type).slice(-2)).toEqual(['voted', 'responded']);

    advance(600);
    await settle();
    expect(mailsTo(emails)).toHaveLength(4);
  });

  it('sends a reviewer it adds the question, and their first reminder remind_every later', async () => {
    const { emails, reviewers } = people('ann', 'dee');
    const [annEmail, deeEmail] = emails as [string, string];
    const pause = await createPause(service.url, dev.live, {
      reviewers: reviewers.slice(0, 1),
      remind_every: 60,
      remind_max: 3,
      escalate: { after: 60, reviewers: reviewers.slice(1) },
      expires_in: 3600,
    });
    await waitForMailsTo(emails, 1);
    // The escalation and the first reminder fall due at the same instant.
    advanceTo(pause.created_at, 60);
    await waitForMailsTo(emails, 3);
    await settle();
    expect(mailsTo([deeEmail]).map(isReminder)).toEqual([false]);
    expect(mailsTo([annEmail]).map(isReminder)).toEqual([false, true]);
    advance(60);
    await waitForMailsTo(emails, 5);
    await settle();
    expect(mailsTo([deeEmail]).map(isReminder)).toEqual([false, true]);
    expect(mailsTo([annEmail]).map(isReminder)).toEqual([false, true, true]);
  });

  it('does not escalate a pause decided before `after`', async () => {
    const { emails, reviewers } = people('ann', 'dee');
    const pause = await createPause(service.url, dev.live, {
      reviewers: reviewers.slice(0, 1),
      escalate: { after: 60, reviewers: reviewers.slice(1) },
      expires_in: 3600,
    });
    await waitForMailsTo(emails, 1);
    expect((await vote(service.url, pause.reviewers[0], 'reject')).body.status).toBe('responded');
    expect(await dueTimes(service, pause.id)).toMatchObject({ escalate_at: null, escalated_at: null });
    advance(120);
    await settle();
    const after = await read(pause.id);
    expect(after.reviewers).toHaveLength(1);
    expect(after.escalate.escalated_at).toBeNull();
    expect(mailsTo(emails).map((mail) => mail.to[0])).toEqual([emails[0]]);
    expect((await timeline(pause.id)).some((entry) => entry.type === 'escalated')).toBe(false);
  });
});

describe('test mode', () => {
  it('records every question, reminder and escalation as suppressed and emails nobody', async () => {
    const { emails, reviewers } = people('ann', 'bob', 'dee');
    const pause = await createPause(service.url, dev.test, {
      reviewers: reviewers.slice(0, 2),
      quorum: 2,
      remind_every: 60,
      remind_max: 2,
      escalate: { after: 90, reviewers: reviewers.slice(2) },
      expires_in: 3600,
    });
    const count = async () => (await read(pause.id, dev.test)).notifications.length;
    expect(await count()).toBe(2);
    advanceTo(pause.created_at, 60); // first reminder: ann, bob
    await eventually(async () => expect(await count()).toBe(4));
    advanceTo(pause.created_at, 90); // escalation: dee
    await eventually(async () => expect(await count()).toBe(5));
    advanceTo(pause.created_at, 120); // second reminder: ann, bob, dee
    await eventually(async () => expect(await count()).toBe(8));
    advance(60);
    await settle();

    const final = await read(pause.id, dev.test);
    expect(final.notifications).toHaveLength(8);
    expect(final.notifications.every((n: { status: string }) => n.status === 'suppressed')).toBe(true);
    expect(final.reviewers.map((r: Reviewer) => r.added_by)).toEqual(['create', 'create', 'escalation']);
    const entries = await timeline(pause.id, dev.test);
    expect(remindedIn(entries).sort()).toEqual([emails[0], emails[0], emails[1], emails[1], emails[2]]);
    expect(entries.filter((entry) => entry.type === 'escalated')).toHaveLength(1);
    const notified = entries.filter((entry) => entry.type === 'notified');
    expect(notified).toHaveLength(8);
    expect(notified.every((entry) => entry.detail.status === 'suppressed')).toBe(true);
    expect(mailsTo(emails)).toEqual([]);

    // What would have gone out is kept for the developer to read, with the reviewer's own link.
    const reminder = entries.find((entry) => entry.type === 'reminded' && entry.detail.to === emails[2]);
    const rendered = await call(
      service.url,
      'GET',
      `/v1/pause/${pause.id}/notifications/${reminder?.detail.notification_id}`,
      { token: dev.test },
    );
    expect(rendered.body.subject).toMatch(/^Reminder: decision needed: /);
    expect(rendered.body.text).toContain(`/r/${tokenOf(reviewerOf(final, emails[2] ?? ''))}?choice=approve`);
  });
});

describe('a decided, cancelled or expired pause', () => {
  it("clears a decided, cancelled or expired pause's due reminder and escalation", async () => {
    const { reviewers } = people('ann', 'bob', 'dee');
    const fields = {
      reviewers: reviewers.slice(0, 2),
      quorum: 2,
      remind_every: 60,
      escalate: { after: 90, reviewers: reviewers.slice(2) },
    };
    const decided = await createPause(service.url, dev.test, { ...fields, veto: ['reject'], expires_in: 3600 });
    const cancelled = await createPause(service.url, dev.test, { ...fields, expires_in: 3600 });
    const expiring = await createPause(service.url, dev.test, { ...fields, expires_in: 100 });
    for (const pause of [decided, cancelled, expiring]) {
      expect(await dueTimes(service, pause.id)).toMatchObject({
        remind_at: expect.any(String),
        escalate_at: expect.any(String),
      });
    }
    expect((await vote(service.url, decided.reviewers[0], 'reject')).body.status).toBe('responded');
    expect((await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.test })).status).toBe(200);
    for (const pause of [decided, cancelled]) {
      expect(await dueTimes(service, pause.id)).toMatchObject({ remind_at: null, escalate_at: null });
    }

    // Its reminder, its escalation and its expiry all fall due at once: it times out and nothing is sent.
    advance(100);
    await eventually(async () => expect((await read(expiring.id, dev.test)).status).toBe('timed_out'));
    await settle();
    expect(await dueTimes(service, expiring.id)).toMatchObject({
      remind_at: null,
      escalate_at: null,
      reminders_sent: 0,
      escalated_at: null,
    });
    for (const pause of [decided, cancelled, expiring]) {
      expect((await read(pause.id, dev.test)).notifications).toHaveLength(2);
    }
  });

  it('never reminds on a pause that a racing vote decided', async () => {
    // Twenty pauses whose first reminder falls due about a second from now,
    // and a deciding vote on each sent around that moment: whichever commits
    // first, a reminder goes to both reviewers (before the vote) or to nobody.
    // On PostgreSQL that takes the pause row's lock: without it this test
    // fails (a reminder to the one who had not voted, on a decided pause).
    const groupOf = Array.from({ length: 20 }, () => people('ann', 'bob'));
    const pauses = await Promise.all(
      groupOf.map(({ reviewers }) =>
        createPause(service.url, dev.test, { reviewers, remind_every: 60, remind_max: 3, expires_in: 3600 }),
      ),
    );
    const latest = pauses.map((pause) => pause.created_at as string).sort()[pauses.length - 1] ?? '';
    advanceTo(latest, 60 - 1.2);
    await Promise.all(
      pauses.map(async (pause, index) => {
        await sleep(800 + Math.random() * 600);
        const reply = await vote(service.url, pause.reviewers[index % 2], 'approve');
        expect(reply.body.status).toBe('responded');
      }),
    );
    advance(60);
    await settle();
    advance(60);
    await settle();
    for (const [index, pause] of pauses.entries()) {
      const entries = await timeline(pause.id, dev.test);
      const reminded = remindedIn(entries).sort();
      expect([[], groupOf[index]?.emails]).toContainEqual(reminded);
      expect(await dueTimes(service, pause.id)).toMatchObject({ remind_at: null });
    }
  });
});

describe('a restart', () => {
  it('loses no reminder or escalation and doubles none', async () => {
    const { emails, reviewers } = people('ann', 'bob', 'cy', 'dee');
    const [annEmail, bobEmail, cyEmail, deeEmail] = emails as [string, string, string, string];
    const database = await freshDatabase();
    const env = { ...smtpEnv(), SECRET_KEY: service.secretKey, WEBHOOK_RETRY_SCHEDULE_MS: '500,500,500,500,500' };
    let current = await startTestService({ clock, database, env });
    try {
      const owner = await registerAccount(current.url);
      const pause = await createPause(current.url, owner.live, {
        reviewers: reviewers.slice(0, 3),
        quorum: 2,
        remind_every: 120,
        remind_max: 3,
        escalate: { after: 300, reviewers: reviewers.slice(3) },
        expires_in: 3600,
      });
      const ann = reviewerOf(pause, annEmail);
      await waitForMailsTo(emails, 3);
      advanceTo(pause.created_at, 120); // reminder 1: ann, bob, cy
      await waitForMailsTo(emails, 6);
      expect((await vote(current.url, ann, 'approve')).body.status).toBe('pending');

      // Reminder 2 is taken (its emails written) while the SMTP server refuses;
      // the instance stops before it could send them.
      smtp.refuseAll();
      advanceTo(pause.created_at, 240);
      await eventually(async () => {
        const rows = await current.store.db
          .selectFrom('notifications')
          .select(['recipient', 'attempts'])
          .where('pause_id', '=', pause.id)
          .where('kind', '=', 'reminder')
          .execute();
        expect(rows).toHaveLength(5);
        expect(rows.every((row) => Number(row.attempts) >= 1)).toBe(true);
      });
      await current.stop();
      smtp.accept();
      expect(mailsTo(emails)).toHaveLength(6);

      // Another instance over the same database sends them, once.
      current = await startTestService({ clock, database, env });
      const second = (await waitForMailsTo(emails, 8)).slice(6);
      expect(byRecipient(second)).toEqual([bobEmail, cyEmail]);

      // The escalation (at 300 s) falls due while no instance runs; the next one sends it.
      await current.stop();
      advanceTo(pause.created_at, 305);
      current = await startTestService({ clock, database, env });
      const escalation = (await waitForMailsTo(emails, 9)).slice(8);
      expect(byRecipient(escalation)).toEqual([deeEmail]);
      expect(isReminder(escalation[0]!)).toBe(false);

      // So does reminder 3 (at 360 s), to everyone who has not voted, the added reviewer too.
      await current.stop();
      advanceTo(pause.created_at, 365);
      current = await startTestService({ clock, database, env });
      const third = (await waitForMailsTo(emails, 12)).slice(9);
      expect(third.every(isReminder)).toBe(true);
      expect(byRecipient(third)).toEqual([bobEmail, cyEmail, deeEmail]);
      const stored = await read(pause.id, owner.live, current.url);
      for (const mail of [...escalation, ...third])
        expectOwnLinks(mail, reviewerOf(stored, mail.to[0] ?? ''), stored.reviewers);

      // remind_max is 3: nothing more, across yet another restart.
      await current.stop();
      advanceTo(pause.created_at, 600);
      current = await startTestService({ clock, database, env });
      await settle(current);
      expect(mailsTo(emails)).toHaveLength(12);
      const entries = await timeline(pause.id, owner.live, current.url);
      expect(remindedIn(entries).sort()).toEqual(
        [annEmail, bobEmail, cyEmail, bobEmail, cyEmail, bobEmail, cyEmail, deeEmail].sort(),
      );
      expect(entries.filter((entry) => entry.type === 'escalated')).toHaveLength(1);
      await eventually(async () => {
        const notifications = (await read(pause.id, owner.live, current.url)).notifications;
        expect(notifications).toHaveLength(12);
        expect(notifications.every((n: { status: string }) => n.status === 'sent')).toBe(true);
      });

      // The escalated reviewer's approval is the second: it decides.
      const dee = reviewerOf(stored, deeEmail);
      expect((await vote(current.url, dee, 'approve')).body).toMatchObject({ status: 'responded', choice: 'approve' });
    } finally {
      smtp.accept();
      await current.stop();
      await database.drop();
    }
  });
});
