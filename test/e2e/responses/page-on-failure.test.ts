import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEngine } from '../../helpers/database.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The response page when the service fails: only a token that is not genuine
// is "this link is not valid" (404); a failure on our side is a 500 page that
// says so, and the cause is in the log.

describe('the response page with the database gone', () => {
  let service: TestService;
  let account: Account;
  let token: string;
  let reviewerToken: string;
  beforeAll(async () => {
    service = await startTestService();
    account = await registerAccount(service.url);
    token = tokenOf(await createPause(service.url, account.live, { title: 'Deploy?' }));
    const withReviewers = await createPause(service.url, account.test, {
      reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }],
    });
    reviewerToken = tokenOf(withReviewers.reviewers[0]);
    expect((await call(service.url, 'GET', `/r/${token}`)).status).toBe(200);
    await breakDatabase(service);
  });
  afterAll(() => service?.destroy());

  const errorsLoggedFor = (requestId: string | null) =>
    service.logs.map((line) => JSON.parse(line)).filter((entry) => entry.reqId === requestId && entry.err);

  it('answers a genuine link with a 500 page that asks to try again, and logs the cause', async () => {
    const reply = await call(service.url, 'GET', `/r/${token}`);
    expect(reply.status).toBe(500);
    expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
    expect(reply.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.text).toContain('Something went wrong on our side');
    expect(reply.text).toContain('try again');
    expect(reply.text).not.toContain('not valid');
    expect(reply.text).not.toMatch(/sqlite|postgres|database|stack|Error:/i);
    const logged = errorsLoggedFor(reply.headers.get('x-request-id'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 50, msg: 'response page failed' });
  });

  it('answers an answer to a genuine link with the same 500 page, not 404', async () => {
    const reply = await call(service.url, 'POST', `/r/${token}`, {
      rawBody: 'choice=approve',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(500);
    expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
    expect(reply.text).toContain('Something went wrong on our side');
    expect(reply.text).not.toContain('not valid');
    expect(errorsLoggedFor(reply.headers.get('x-request-id')).length).toBeGreaterThan(0);
  });

  it('still answers a token that is not genuine with 404, logging no error', async () => {
    const forged = `${token.slice(0, -4)}AAAA`;
    for (const method of ['GET', 'POST']) {
      const reply = await call(service.url, method, `/r/${forged}`, {
        rawBody: method === 'POST' ? 'choice=approve' : undefined,
        headers: method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
      });
      expect(reply.status).toBe(404);
      expect(reply.text).toContain('This link is not valid');
      expect(errorsLoggedFor(reply.headers.get('x-request-id'))).toEqual([]);
    }
  });

  it("refuses a forged or truncated reviewer's token with 404 before any database read", async () => {
    const [pauseId, reviewerId, mac = ''] = reviewerToken.split('.');
    const otherReviewer = `rvw_${'0'.repeat(26)}`;
    const refused = [
      `${pauseId}.${reviewerId}.${mac.slice(0, -4)}AAAA`,
      `${pauseId}.${reviewerId}.${mac.slice(0, 20)}`,
      `${pauseId}.${reviewerId}`,
      `${pauseId}.${otherReviewer}.${mac}`,
    ];
    for (const forged of refused) {
      for (const path of [`/r/${forged}`, `/v1/respond/${forged}`]) {
        const reply = await call(service.url, 'GET', path);
        expect(reply.status, path).toBe(404);
        expect(errorsLoggedFor(reply.headers.get('x-request-id'))).toEqual([]);
      }
    }
    // The genuine one reaches the (broken) database.
    expect((await call(service.url, 'GET', `/v1/respond/${reviewerToken}`)).status).toBe(500);
  });

  it('agrees with the JSON endpoint, which answers 500', async () => {
    const reply = await call(service.url, 'GET', `/v1/respond/${token}`);
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe('internal_error');
  });
});

/** SQLite: the service's connection is closed. PostgreSQL: its database is dropped. */
async function breakDatabase(service: TestService): Promise<void> {
  if (testEngine === 'sqlite') {
    await service.store.close();
    return;
  }
  const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`drop database ${new URL(service.databaseUrl).pathname.slice(1)} with (force)`);
  } finally {
    await admin.end();
  }
}
