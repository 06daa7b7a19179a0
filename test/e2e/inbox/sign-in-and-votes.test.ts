import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { sessionCookie } from '../../../src/web/session.js';
import { ConsoleClient, csrfIn } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { InboxClient, LINK_SUBJECT, linksTo, nextLink } from '../../helpers/inbox.js';
import { createPause, eventually, sleep } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// The reviewers' inbox over real HTTP, with a real SMTP server: sign-in by a
// single-use emailed link, the session cookie, CSRF and cross-site refusals,
// which questions are listed, voting through the reviewer's own rules, and
// sign-out. (In Chromium: test/e2e/inbox/browser.test.ts.)

let smtp: SmtpReceiver;
let service: TestService;
let dev: Account;
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startTestService({
    clock,
    env: { SMTP_URL: smtp.url, EMAIL_FROM: 'pausepoint <approvals@example.com>' },
  });
  dev = await registerAccount(service.url);
});

afterAll(async () => {
  await service?.destroy();
  await smtp?.close();
});

beforeEach(() => {
  offsetMs = 0;
});

let people = 0;
/** A fresh reviewer address for each test. */
const someone = (name: string) => `${name}.${++people}.${Math.random().toString(36).slice(2, 8)}@example.com`;

const livePause = (title: string, reviewers: string[], extra: Record<string, unknown> = {}) =>
  createPause(service.url, dev.live, { title, reviewers: reviewers.map((email) => ({ email })), ...extra });

const readPause = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: dev.live })).body;

/** The titles of the questions waiting in an inbox page, in order. */
const waitingTitles = (html: string) => [...html.matchAll(/<h3 id="q-\d+">([^<]*)<\/h3>/g)].map((m) => m[1]);

/** The path a question's vote form posts to. */
const voteAction = (pauseId: string) => `/inbox/vote/${pauseId}`;

describe('asking for a sign-in link', () => {
  it('answers the same for an address with questions waiting and for an unknown one, and emails only the first', async () => {
    const known = someone('known');
    const unknown = someone('unknown');
    await livePause('Deploy the hotfix?', [known]);
    const client = new InboxClient(service.url);
    const forKnown = await client.requestLink(known);
    const forUnknown = await client.requestLink(unknown);
    expect(forKnown.status).toBe(200);
    expect(forUnknown.status).toBe(200);
    expect(forKnown.text.replaceAll(known, 'ADDRESS')).toBe(forUnknown.text.replaceAll(unknown, 'ADDRESS'));
    expect(forKnown.text).toContain('a sign-in link is on its way');
    expect(forKnown.headers.get('set-cookie')).toBeNull();

    const link = await nextLink(smtp, known);
    expect(link).toMatch(new RegExp(`^${service.url}/inbox/link/svc_inboxlink_[0-9a-f]{48}$`));
    // The link is stored hashed: its token is nowhere in the database.
    const token = link.split('/').pop()!;
    const rows = await service.store.db.selectFrom('inbox_links').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    await sleep(300);
    expect(smtp.mails.filter((mail) => mail.to.includes(unknown))).toEqual([]);
    expect(service.logs.join('\n')).not.toContain(token);
  });

  it('sends no link to an address that only test-mode pauses name', async () => {
    const tester = someone('tester');
    await createPause(service.url, dev.test, { reviewers: [{ email: tester }] });
    expect((await new InboxClient(service.url).requestLink(tester)).status).toBe(200);
    await sleep(300);
    expect(smtp.mails.filter((mail) => mail.to.includes(tester))).toEqual([]);
  });

  it('refuses a malformed address with the form, not a link', async () => {
    const reply = await new InboxClient(service.url).requestLink('not an address');
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('Enter a valid email address.');
  });
});

describe('the sign-in link', () => {
  it('shows a button on GET (using nothing up) and signs in once on POST; a second use is refused', async () => {
    const reviewer = someone('once');
    await livePause('Rotate the keys?', [reviewer]);
    const first = new InboxClient(service.url);
    await first.requestLink(reviewer);
    const link = await nextLink(smtp, reviewer);
    const path = new URL(link).pathname;
    // Opening it (as a mail scanner would) twice leaves it usable.
    expect((await first.get(path)).status).toBe(200);
    expect((await first.get(path)).status).toBe(200);
    const signedIn = await first.post(path, {});
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/inbox');
    expect(first.cookie).toMatch(/^pausepoint_inbox=svc_inbox_[0-9a-f]{48}$/);

    const second = new InboxClient(service.url);
    const again = await second.post(path, {});
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link does not work any more');
    expect(second.cookie).toBeUndefined();
    expect((await second.get(path)).status).toBe(410);
    // Neither the link's token nor the session's is ever logged.
    const logs = service.logs.join('\n');
    expect(logs).not.toContain(path.split('/').pop()!);
    expect(logs).not.toContain(first.cookie!.split('=')[1]!);
  });

  it('is used once when two requests race for it', async () => {
    const reviewer = someone('race');
    await livePause('Merge the branch?', [reviewer]);
    await new InboxClient(service.url).requestLink(reviewer);
    const path = new URL(await nextLink(smtp, reviewer)).pathname;
    const replies = await Promise.all([0, 1, 2, 3].map(() => new InboxClient(service.url).post(path, {})));
    expect(replies.map((r) => r.status).sort()).toEqual([303, 410, 410, 410]);
  });

  it('is refused after 15 minutes', async () => {
    const reviewer = someone('late');
    await livePause('Pay the invoice?', [reviewer], { expires_in: 86_400 });
    const client = new InboxClient(service.url);
    await client.requestLink(reviewer);
    const path = new URL(await nextLink(smtp, reviewer)).pathname;
    offsetMs = 15 * 60 * 1000 + 1000;
    expect((await client.get(path)).status).toBe(410);
    const late = await client.post(path, {});
    expect(late.status).toBe(410);
    expect(late.text).toContain('has been used or has expired');
    expect(client.cookie).toBeUndefined();
  });

  it('refuses a token that was never issued', async () => {
    const client = new InboxClient(service.url);
    expect((await client.post(`/inbox/link/svc_inboxlink_${'0'.repeat(48)}`, {})).status).toBe(410);
    expect((await client.get('/inbox/link/whatever')).status).toBe(410);
  });
});

describe('the session', () => {
  it('is an HttpOnly, SameSite=Lax cookie of its own (Secure and __Host- on https)', async () => {
    const reviewer = someone('cookie');
    await livePause('Open the gates?', [reviewer]);
    const client = new InboxClient(service.url);
    const signedIn = await client.signInByEmail(reviewer, smtp);
    const setCookie = signedIn.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^pausepoint_inbox=svc_inbox_[0-9a-f]{48}; Path=\/; HttpOnly; SameSite=Lax$/);
    const cookie = sessionCookie('pausepoint_inbox');
    expect(cookie.name({ publicBaseUrl: 'https://pause.example.com' })).toBe('__Host-pausepoint_inbox');
    // Only the token's hash is stored, with a 12 h idle expiry.
    const token = client.cookie!.split('=')[1]!;
    const rows = await service.store.db
      .selectFrom('inbox_sessions')
      .selectAll()
      .where('email', '=', reviewer)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    const idle = Date.parse(rows[0]!.expires_at) - Date.parse(rows[0]!.last_used_at);
    expect(idle).toBe(12 * 60 * 60 * 1000);
    // The console knows nothing of it.
    const asConsole = await new ConsoleClient(service.url).get('/console/pauses', {
      cookie: `pausepoint_console=${token}`,
    });
    expect(asConsole.status).toBe(303);
  });

  it('is replaced at each sign-in: the session the browser had ends', async () => {
    const reviewer = someone('rotate');
    await livePause('Renew the certificate?', [reviewer]);
    const client = new InboxClient(service.url);
    await client.signInByEmail(reviewer, smtp);
    const before = client.cookie!;
    await client.signInByEmail(reviewer, smtp);
    expect(client.cookie).not.toBe(before);
    const rows = await service.store.db
      .selectFrom('inbox_sessions')
      .select('id')
      .where('email', '=', reviewer)
      .execute();
    expect(rows).toHaveLength(1);
    expect((await new InboxClient(service.url).get('/inbox', { cookie: before })).status).toBe(303);
    expect((await client.get('/inbox')).status).toBe(200);
  });

  it('ends after 12 h without use', async () => {
    const reviewer = someone('idle');
    await livePause('Archive the logs?', [reviewer], { expires_in: 86_400 * 3 });
    const client = new InboxClient(service.url);
    await client.signInByEmail(reviewer, smtp);
    expect((await client.get('/inbox')).status).toBe(200);
    offsetMs = 12 * 60 * 60 * 1000 + 60_000;
    const later = await client.get('/inbox');
    expect(later.status).toBe(303);
    expect(later.location).toBe('/inbox/sign-in');
  });

  it('sends a visitor without a session to sign in', async () => {
    const reply = await new InboxClient(service.url).get('/inbox');
    expect(reply.status).toBe(303);
    expect(reply.location).toBe('/inbox/sign-in');
    expect(reply.headers.get('cache-control')).toBe('no-store');
  });
});

describe('forms', () => {
  it('refuse a POST without the CSRF token, with another one, or from another site', async () => {
    const reviewer = someone('csrf');
    const pause = await livePause('Drop the table?', [reviewer]);
    const client = new InboxClient(service.url);
    await client.signInByEmail(reviewer, smtp);
    const csrf = await client.csrf();
    const vote = voteAction(pause.id);

    expect((await client.post(vote, { choice: 'approve' })).status).toBe(403);
    expect((await client.post(vote, { choice: 'approve', csrf: `${csrf}x` })).status).toBe(403);
    // A console CSRF token is not an inbox one.
    const consoleUser = new ConsoleClient(service.url);
    await consoleUser.signIn(dev.email, dev.password);
    expect((await client.post(vote, { choice: 'approve', csrf: await consoleUser.csrf() })).status).toBe(403);
    const crossSite = await client.post(vote, { choice: 'approve', csrf }, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect((await client.post(vote, { choice: 'approve', csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await client.post('/inbox/sign-out', {})).status).toBe(403);
    expect(
      (
        await new InboxClient(service.url).post(
          '/inbox/sign-in',
          { email: reviewer },
          { origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);

    // None of them voted.
    expect((await readPause(pause.id)).reviewers[0].vote).toBeNull();
    const page = await client.get('/inbox');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
  });
});

describe('the inbox', () => {
  it('lists only the live pending pauses that still wait for this reviewer, soonest deadline first', async () => {
    const me = someone('me');
    const other = someone('other');
    const later = await livePause('Later deadline', [me, other], { expires_in: 7200 });
    const sooner = await livePause('Sooner deadline', [me], { expires_in: 600 });
    const expiring = await livePause('About to expire', [me], { expires_in: 90 });
    await livePause('Not mine', [other]);
    await createPause(service.url, dev.test, { title: 'Test mode', reviewers: [{ email: me }] });
    const cancelled = await livePause('Cancelled one', [me]);
    expect((await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.live })).status).toBe(200);
    const voted = await livePause('Already voted', [me, other], { quorum: 2 });
    const mine = voted.reviewers.find((r: { email: string }) => r.email === me);
    const token = new URL(mine.response_url).pathname.replace(/^\/r\//, '');
    expect((await call(service.url, 'POST', `/v1/respond/${token}`, { body: { choice: 'approve' } })).status).toBe(200);

    const client = new InboxClient(service.url);
    await client.signInByEmail(me, smtp);
    const page = await client.get('/inbox');
    expect(page.status).toBe(200);
    expect(waitingTitles(page.text)).toEqual(['About to expire', 'Sooner deadline', 'Later deadline']);
    expect(page.text).toContain(`action="${voteAction(sooner.id)}"`);
    expect(page.text).toContain(`action="${voteAction(later.id)}"`);
    // The vote already cast is in the history, with the pause still waiting for the others.
    expect(page.text).toMatch(
      /<th scope="row">Already voted<div class="asked">.*?<\/div><\/th><td data-label="Your vote">approve<\/td>/,
    );
    expect(page.text).toContain('Waiting for the other reviewers');
    expect(page.text).not.toContain('Not mine');
    expect(page.text).not.toContain('Test mode');
    // Another reviewer's address is never shown.
    expect(page.text).not.toContain(other);

    // Past its deadline a pause is no longer listed.
    offsetMs = 2 * 60 * 1000;
    expect(waitingTitles((await client.get('/inbox')).text)).toEqual(['Sooner deadline', 'Later deadline']);
    expect(expiring.id).toBeTruthy();
  });

  it('tells two questions with the same title apart by who asked and when, and says what a vote was on', async () => {
    const me = someone('twins');
    const first = await livePause('Deploy v2?', [me]);
    offsetMs = 5 * 60 * 1000;
    const second = await livePause('Deploy v2?', [me], { expires_in: 7200 });
    // The reviewer's emails say who asks too.
    await eventually(() =>
      expect(
        smtp.mails.filter((mail) => mail.to.includes(me) && mail.parsed.subject === 'Decision needed: Deploy v2?')
          .length,
      ).toBeGreaterThanOrEqual(2),
    );
    for (const mail of smtp.mails.filter((mail) => mail.to.includes(me) && mail.parsed.subject !== LINK_SUBJECT)) {
      expect(mail.parsed.text).toContain(`Asked by ${dev.email}.`);
    }
    const client = new InboxClient(service.url);
    await client.signInByEmail(me, smtp);
    const page = await client.get('/inbox');
    expect(waitingTitles(page.text)).toEqual(['Deploy v2?', 'Deploy v2?']);
    for (const pause of [first, second]) {
      expect(page.text).toContain(
        `<p class="asked">Asked by ${dev.email} · <time datetime="${pause.created_at}" data-relative="">${pause.created_at.slice(0, 10)} ${pause.created_at.slice(11, 16)} UTC</time></p>`,
      );
    }
    // The console's frame and wordmark, and its script that shows times in the reader's zone.
    expect(page.text).toContain('<a class="brand" href="/inbox">pause<span>point</span></a>');
    expect(page.text).toContain('<script src="/inbox/assets/inbox.js" defer="">');
    const script = await client.get('/inbox/assets/inbox.js');
    expect(script.status).toBe(200);
    expect(script.text).toContain('timeZoneName');

    const voted = await client.post(voteAction(second.id), { csrf: csrfIn(page.text), choice: 'reject' });
    expect(voted.location).toBe(`/inbox?voted=${second.id}`);
    const after = await client.get(voted.location!);
    expect(after.text).toContain('Your vote “reject” on “Deploy v2?” has been recorded.');
    // The votes, in a card, each with who asked.
    expect(after.text).toContain('<div class="card votes">');
    expect(after.text).toMatch(
      new RegExp(`<th scope="row">Deploy v2\\?<div class="asked">Asked by ${dev.email.replace(/[.+]/g, '\\$&')}`),
    );
  });

  it('finds the pauses that name the reviewer in another case, and counts their vote', async () => {
    const me = someone('mixed');
    const pause = await livePause('Named in capitals', [me.toUpperCase()]);
    const client = new InboxClient(service.url);
    await client.signInByEmail(me, smtp);
    expect(waitingTitles((await client.get('/inbox')).text)).toEqual(['Named in capitals']);
    const voted = await client.post(voteAction(pause.id), { csrf: await client.csrf(), choice: 'approve' });
    expect(voted.status, voted.text).toBeLessThan(400);
    expect((await readPause(pause.id)).status).toBe('responded');
  });

  it('counts a vote cast in the inbox, through the same rules as the personal link, and refuses a second', async () => {
    const me = someone('voter');
    const other = someone('second');
    const pause = await livePause('Approve the refund?', [me, other], { quorum: 2, allow_text: true });
    const client = new InboxClient(service.url);
    await client.signInByEmail(me, smtp);
    const csrf = await client.csrf();

    const voted = await client.post(voteAction(pause.id), { csrf, choice: 'approve', text: 'looks right' });
    expect(voted.status, voted.text).toBe(303);
    expect(voted.location).toBe(`/inbox?voted=${pause.id}`);
    const read = await readPause(pause.id);
    expect(read.status).toBe('pending');
    const mine = read.reviewers.find((r: { email: string }) => r.email === me);
    expect(mine.vote).toMatchObject({ choice: 'approve', text: 'looks right' });

    const after = await client.get(voted.location!);
    expect(after.text).toContain('Your vote “approve” on “Approve the refund?” has been recorded.');
    expect(waitingTitles(after.text)).toEqual([]);
    expect(after.text).toMatch(
      /<th scope="row">Approve the refund\?<div class="asked">.*?<\/div><\/th><td data-label="Your vote">approve<\/td>/,
    );

    const again = await client.post(voteAction(pause.id), { csrf, choice: 'reject' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('You have already voted on this question');
    expect((await readPause(pause.id)).reviewers.find((r: { email: string }) => r.email === me).vote.choice).toBe(
      'approve',
    );

    // An option the question does not have is refused as on the personal page.
    const third = await livePause('Pick a colour', [me], { options: ['red', 'blue'] });
    const wrong = await client.post(voteAction(third.id), { csrf, choice: 'green' });
    expect(wrong.status).toBe(400);
    expect((await readPause(third.id)).reviewers[0].vote).toBeNull();

    // A pause that does not name this reviewer cannot be voted on from here.
    const notMine = await livePause('Someone else', [other]);
    const refused = await client.post(voteAction(notMine.id), { csrf, choice: 'approve' });
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('This question is not in your inbox.');
    expect((await readPause(notMine.id)).reviewers[0].vote).toBeNull();
  });

  it('decides the pause when the inbox vote reaches the quorum', async () => {
    const me = someone('decider');
    const pause = await livePause('Restart the cluster?', [me]);
    const client = new InboxClient(service.url);
    await client.signInByEmail(me, smtp);
    await client.post(voteAction(pause.id), { csrf: await client.csrf(), choice: 'reject' });
    const read = await readPause(pause.id);
    expect(read.status).toBe('responded');
    expect(read.response.choice).toBe('reject');
    expect((await client.get('/inbox')).text).toContain('Decided: reject');
  });
});

describe('reviewer emails', () => {
  it('link to the inbox', async () => {
    const me = someone('mailed');
    await livePause('Send the newsletter?', [me]);
    let question: (typeof smtp.mails)[number] | undefined;
    const deadline = Date.now() + 10_000;
    while (!question && Date.now() < deadline) {
      question = smtp.mails.find((mail) => mail.to.includes(me) && mail.parsed.subject !== LINK_SUBJECT);
      if (!question) await sleep(50);
    }
    expect(question, 'the question email').toBeDefined();
    expect(question!.parsed.text).toContain(`All questions waiting for you: ${service.url}/inbox`);
    expect(question!.parsed.html).toContain(`href="${service.url}/inbox"`);
  });
});

describe('sign-out', () => {
  it('deletes the session: the old cookie no longer opens the inbox', async () => {
    const me = someone('leaver');
    await livePause('Close the ticket?', [me]);
    const client = new InboxClient(service.url);
    await client.signInByEmail(me, smtp);
    const oldCookie = client.cookie!;
    const page = await client.get('/inbox');
    const out = await client.post('/inbox/sign-out', { csrf: csrfIn(page.text) });
    expect(out.status).toBe(303);
    expect(out.location).toBe('/inbox/sign-in?signed-out=1');
    expect(out.headers.get('set-cookie')).toMatch(/^pausepoint_inbox=; Max-Age=0;/);
    expect(client.cookie).toBeUndefined();
    const replay = await new InboxClient(service.url).get('/inbox', { cookie: oldCookie });
    expect(replay.status).toBe(303);
    expect(replay.location).toBe('/inbox/sign-in');
    expect(await service.store.db.selectFrom('inbox_sessions').selectAll().where('email', '=', me).execute()).toEqual(
      [],
    );
    expect(linksTo(smtp, me)).toHaveLength(1);
  });
});

describe('asking for links, behind a trusted proxy on a still clock', () => {
  let limited: TestService;
  const now = Date.parse('2031-05-10T12:00:00.000Z');
  beforeAll(async () => {
    limited = await startTestService({
      env: { AUTH_RATE_LIMIT: '3/60', TRUST_PROXY: 'true' },
      clock: { now: () => new Date(now) },
    });
  });
  afterAll(() => limited?.destroy());

  const ask = (email: string, ip: string) =>
    new InboxClient(limited.url).post('/inbox/sign-in', { email }, { 'x-forwarded-for': ip });

  it('is rate-limited per email address, whatever the client address', async () => {
    const email = someone('flooded');
    for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) expect((await ask(email, ip)).status).toBe(200);
    const refused = await ask(email.toUpperCase(), '192.0.2.4');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('20');
    expect(refused.text).toContain('Too many attempts');
  });

  it('is rate-limited per client address, whatever the email', async () => {
    for (const n of [1, 2, 3]) expect((await ask(someone(`many${n}`), '198.51.100.7')).status).toBe(200);
    expect((await ask(someone('many4'), '198.51.100.7')).status).toBe(429);
    expect((await ask(someone('many5'), '198.51.100.8')).status).toBe(200);
  });
});
