import type { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitAnswer, submitPostedAnswer } from '../../src/actions/answer-pause.js';
import type { ServiceContext } from '../../src/context.js';
import { type Account, registerAccount } from '../helpers/http.js';
import { createPause, eventsOf, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The answer and vote rules at their own level: submitAnswer, the action the
// respond API, the response page, the inbox and MCP all call, called directly
// with the service's context, no HTTP in between. Each refusal is the action's
// ApiError with its code (the routes turn it into the status and body that
// test/e2e/responses/ and test/e2e/reviewers/ check).

let service: TestService;
let services: ServiceContext;
let dev: Account;
beforeAll(async () => {
  service = await startTestService();
  services = service.app.services;
  dev = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

/** The code of the ApiError the action threw. */
async function refusal(answering: Promise<unknown>): Promise<string> {
  const error = await answering.then(
    () => undefined,
    (thrown: { code?: string }) => thrown,
  );
  expect(error, 'the action was expected to refuse').toBeDefined();
  return String(error?.code);
}

describe('submitAnswer on a shared link', () => {
  it('records the first answer once, with its event, and refuses every later one', async () => {
    const pause = await createPause(service.url, dev.test, { options: ['ship', 'hold'], allow_text: true });
    const token = tokenOf(pause);
    expect(await refusal(submitAnswer(services, token, { choice: 'maybe' }))).toBe('invalid_request');

    const answered = await submitAnswer(services, token, { choice: 'ship', text: 'go ahead' });
    expect(answered).toEqual({
      status: 'responded',
      choice: 'ship',
      text: 'go ahead',
      values: null,
      edited: false,
      response_at: expect.any(String),
    });
    expect(await refusal(submitAnswer(services, token, { choice: 'hold' }))).toBe('already_responded');
    expect((await eventsOf(service, pause.id)).map((event) => event.type)).toEqual(['pause.responded']);
  });

  it('treats empty text as none, and refuses a token that is not genuine', async () => {
    const pause = await createPause(service.url, dev.test);
    expect(await submitAnswer(services, tokenOf(pause), { choice: 'approve', text: '' })).toMatchObject({
      status: 'responded',
      text: null,
    });
    expect(await refusal(submitAnswer(services, `${tokenOf(pause)}x`, { choice: 'approve' }))).toBe('not_found');
  });
});

describe('submitAnswer on a reviewer’s link', () => {
  it('counts each reviewer once and decides when the quorum agrees', async () => {
    const pause = await createPause(service.url, dev.test, {
      reviewers: [{ email: 'ann@actions.example.com' }, { email: 'bob@actions.example.com' }],
      quorum: 2,
      allow_text: true,
    });
    const [ann, bob] = pause.reviewers as Array<{ response_url: string }>;
    // The shared link of a pause with reviewers addresses nothing one may answer.
    expect(pause.response_url).toBeNull();

    const first = await submitAnswer(services, tokenOf(ann!), { choice: 'approve' });
    expect(first).toMatchObject({ status: 'pending', choice: null, your_vote: { choice: 'approve', text: null } });
    expect(await refusal(submitAnswer(services, tokenOf(ann!), { choice: 'reject' }))).toBe('already_voted');

    const second = await submitAnswer(services, tokenOf(bob!), { choice: 'approve', text: 'agreed' });
    expect(second).toMatchObject({ status: 'responded', choice: 'approve', your_vote: { choice: 'approve' } });
    const events = (await eventsOf(service, pause.id)).map((event) => event.type);
    expect(events.filter((type) => type !== 'pause.voted')).toEqual(['pause.responded']);
  });
});

describe('submitPostedAnswer', () => {
  it('reads the pause once for a page’s answer with values', async () => {
    const schema = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] };
    const pause = await createPause(service.url, dev.test, { form: { schema, values: { amount: 5 } } });
    // The service's own database, each statement it is sent noted on its way:
    // through Kysely, or (a read outside a transaction on SQLite) at once.
    const statements: string[] = [];
    const { db, readNow } = services.store;
    const noting = new Proxy(db, {
      get: (target, name) =>
        name === 'executeQuery'
          ? (query: CompiledQuery) => {
              statements.push(query.sql);
              return target.executeQuery(query);
            }
          : Reflect.get(target, name, target),
    });
    const store = {
      ...services.store,
      db: noting,
      readNow:
        readNow &&
        ((sql: string, parameters: readonly unknown[]) => {
          const rows = readNow(sql, parameters);
          if (rows) statements.push(sql);
          return rows;
        }),
    };
    const answered = await submitPostedAnswer({ ...services, store }, tokenOf(pause), {
      choice: 'approve',
      fields: { amount: '7' },
    });
    expect(answered).toMatchObject({ status: 'responded', values: { amount: 7 }, edited: true });
    expect(statements.filter((sql) => /^select .* from "pauses"/i.test(sql))).toHaveLength(1);
  });
});
