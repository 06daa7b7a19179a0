import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, type Reply, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What a refused request says: every bad field at once, each in words a
// person can act on (docs/errors.md), never the validator's own wording.

let service: TestService;
let alice: Account;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

/** The validator's raw phrases, which must never reach a client. */
const VALIDATOR_WORDING =
  /must NOT|##|must match|must be equal to|must be [<>]=?|must have required|anyOf|oneOf|schema/;

const createPause = (body: unknown) => call(service.url, 'POST', '/v1/pause', { token: alice.test, body });

function fieldsOf(reply: Reply): { field: string; problem: string }[] {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.error.code).toBe('invalid_request');
  return reply.body.error.details.fields;
}

describe('a body with several bad fields', () => {
  it('refuses a repeated option even when it is "__proto__", which ajv\'s uniqueItems misses', async () => {
    for (const options of [
      ['__proto__', '__proto__'],
      ['approve', '__proto__', 'reject', '__proto__'],
    ]) {
      const reply = await createPause({ title: 'Ship?', options });
      const [first, second] = [options.indexOf('__proto__'), options.lastIndexOf('__proto__')];
      expect(fieldsOf(reply)).toEqual([
        { field: 'options', problem: `must not repeat an item (options.${first} and options.${second} are the same)` },
      ]);
    }
  });

  it('refuses a repeated "__proto__" in every list of options, not only in options', async () => {
    const twice = ['__proto__', '__proto__'];
    const repeat = (field: string) => ({
      field,
      problem: `must not repeat an item (${field}.0 and ${field}.1 are the same)`,
    });
    const options = ['__proto__', 'reject'];
    const lists = await createPause({
      ...{ title: 'Ship?', options, reviewers: [{ email: 'ana@example.com' }] },
      ...{ veto: twice, require_text: twice },
    });
    expect(fieldsOf(lists)).toEqual([repeat('veto'), repeat('require_text')]);
    const form = { schema: { type: 'object', properties: { note: { type: 'string' } } }, on: twice };
    const formOn = await createPause({ title: 'Ship?', options, form });
    expect(formOn.status, formOn.text).toBe(400);
    expect(formOn.body.error.code).toBe('invalid_form');
    expect(formOn.body.error.details.fields).toEqual([repeat('form.on')]);
  });

  it('names every bad field, each once, in plain words, and the message says the same', async () => {
    const reply = await createPause({
      title: '',
      options: ['a', 'a'],
      allow_text: 'true',
      expires_in: 0,
      colour: 'red',
    });
    const fields = fieldsOf(reply);
    expect([...fields].sort((a, b) => a.field.localeCompare(b.field))).toEqual([
      { field: 'allow_text', problem: 'must be true or false' },
      { field: 'colour', problem: 'is not a known field' },
      { field: 'expires_in', problem: 'must be at least 1' },
      { field: 'options', problem: 'must not repeat an item (options.0 and options.1 are the same)' },
      { field: 'title', problem: 'must be at least 1 character long' },
    ]);
    expect(reply.body.error.message).toMatch(/^Invalid request: .+\.$/);
    for (const { field, problem } of fields) expect(reply.body.error.message).toContain(`${field} ${problem}`);
    expect(reply.body.error.message).not.toMatch(VALIDATOR_WORDING);
  });

  it('keeps the answer small when very many fields are bad: the first 100, the message the first 10', async () => {
    const body = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`extra_${i}`, i]));
    const reply = await createPause({ title: 't', ...body });
    const fields = fieldsOf(reply);
    expect(fields).toHaveLength(100);
    expect(fields[0]).toEqual({ field: 'extra_0', problem: 'is not a known field' });
    expect(reply.body.error.message).toBe(
      `Invalid request: ${Array.from({ length: 10 }, (_, i) => `extra_${i} is not a known field`).join('; ')}; and 140 more fields.`,
    );
  });

  it('names nested fields by their path', async () => {
    const fields = fieldsOf(await createPause({ title: 't', notify: { email: ['ok@example.com', 'nope'], sms: '1' } }));
    expect(fields).toEqual(
      expect.arrayContaining([
        { field: 'notify.email.1', problem: 'must be an email address' },
        { field: 'notify.sms', problem: 'is not a known field' },
      ]),
    );
    expect(fields).toHaveLength(2);
  });
});

describe('the wording of each rule', () => {
  const now = Date.now();
  it.each([
    ['required', {}, 'title', 'is required'],
    ['maxLength', { title: 'x'.repeat(201) }, 'title', 'must be at most 200 characters long'],
    ['minLength of an item', { title: 't', options: [''] }, 'options.0', 'must be at least 1 character long'],
    ['minItems', { title: 't', options: [] }, 'options', 'must have at least 1 item'],
    [
      'maxItems',
      { title: 't', options: Array.from({ length: 11 }, (_, i) => `o${i}`) },
      'options',
      'must have at most 10 items',
    ],
    ['maximum', { title: 't', expires_in: 30 * 86400 + 1 }, 'expires_in', 'must be at most 2592000'],
    ['an integer', { title: 't', expires_in: 1.5 }, 'expires_in', 'must be a whole number'],
    ['a string', { title: 5 }, 'title', 'must be a string'],
    ['an object', { title: 't', metadata: [1, 2] }, 'metadata', 'must be an object'],
    ['an array', { title: 't', options: 'approve' }, 'options', 'must be an array'],
    [
      'a date-time',
      { title: 't', expires_at: 'tomorrow' },
      'expires_at',
      'must be a date and time such as 2026-11-25T22:13:57.000Z',
    ],
    ['a body that is not an object', [now], 'body', 'must be an object'],
  ])('%s', async (_rule, body, field, problem) => {
    const fields = fieldsOf(await createPause(body));
    expect(fields).toEqual([{ field, problem }]);
  });

  it('says a null is not a string', async () => {
    const reply = await call(service.url, 'POST', '/v1/auth/register', {
      body: { email: null, password: 'p'.repeat(9) },
    });
    expect(fieldsOf(reply)).toEqual([
      { field: 'email', problem: 'must be a string' },
      { field: 'password', problem: 'must be at least 10 characters long' },
    ]);
    expect(reply.text).not.toContain('p'.repeat(9));
  });
});

describe('query strings', () => {
  it('gives one message for a value outside a list of choices, naming the choices', async () => {
    const reply = await call(service.url, 'GET', '/v1/pause?status=maybe&limit=0', { token: alice.test });
    expect(fieldsOf(reply)).toEqual([
      { field: 'status', problem: 'must be one of: pending, responded, timed_out, cancelled' },
      { field: 'limit', problem: 'must be at least 1' },
    ]);
    expect(reply.body.error.message).not.toMatch(VALIDATOR_WORDING);
  });

  it('says a number is needed where text was given', async () => {
    const reply = await call(service.url, 'GET', '/v1/pause?limit=ten', { token: alice.test });
    expect(fieldsOf(reply)).toEqual([{ field: 'limit', problem: 'must be a whole number' }]);
  });

  it('names the choices of a mode and an unknown parameter', async () => {
    const login = await call(service.url, 'POST', '/v1/auth/login', {
      body: { email: alice.email, password: alice.password },
    });
    const reply = await call(service.url, 'POST', '/v1/auth/keys/rotate?mode=staging&force=1', {
      token: login.body.session.token,
    });
    expect(fieldsOf(reply)).toEqual(
      expect.arrayContaining([
        { field: 'mode', problem: 'must be one of: live, test' },
        { field: 'force', problem: 'is not a known field' },
      ]),
    );
  });
});

describe("the routes' own checks", () => {
  it('say what is wrong in the same plain words', async () => {
    const reply = await createPause({ title: 't', timeout_default: 'maybe' });
    expect(fieldsOf(reply)).toEqual([{ field: 'timeout_default', problem: 'must be one of the options' }]);
    expect(reply.body.error.message).toBe('Invalid request: timeout_default must be one of the options.');
  });
});

describe('schema errors and the rules that span fields', () => {
  it('are reported together in one 400', async () => {
    const reply = await createPause({ title: '', options: ['a', 'a'], expires_in: 0, quorum: 2 });
    expect(fieldsOf(reply)).toEqual([
      { field: 'title', problem: 'must be at least 1 character long' },
      { field: 'options', problem: 'must not repeat an item (options.0 and options.1 are the same)' },
      { field: 'expires_in', problem: 'must be at least 1' },
      { field: 'quorum', problem: 'needs reviewers' },
    ]);
    expect(reply.body.error.message).toContain('quorum needs reviewers');
  });

  it('each cross-field rule in its own words, next to a schema error', async () => {
    const soon = new Date(Date.now() + 3600_000).toISOString();
    const reply = await createPause({
      title: 'x'.repeat(201),
      options: ['yes', 'no'],
      timeout_default: 'maybe',
      expires_at: soon,
      expires_in: 60,
      veto: ['no'],
      remind_every: 60,
      escalate: { after: 10, reviewers: [{ email: 'boss@example.com' }] },
      notify: { email: ['nope'] },
    });
    const fields = Object.fromEntries(fieldsOf(reply).map(({ field, problem }) => [field, problem]));
    expect(fields).toEqual({
      title: 'must be at most 200 characters long',
      'notify.email.0': 'must be an email address',
      timeout_default: 'must be one of the options',
      expires_in: 'cannot be given together with expires_at',
      veto: 'needs reviewers',
      remind_every: 'needs reviewers',
      escalate: 'needs reviewers',
    });
  });

  it('with reviewers: notify, quorum and veto against the reviewers and options', async () => {
    const reply = await createPause({
      title: '',
      options: ['yes', 'no'],
      reviewers: [{ email: 'a@example.com' }, { email: 'A@example.com' }],
      quorum: 3,
      veto: ['maybe'],
      remind_max: 2,
      notify: { email: ['a@example.com'] },
    });
    const fields = Object.fromEntries(fieldsOf(reply).map(({ field, problem }) => [field, problem]));
    expect(fields).toEqual({
      title: 'must be at least 1 character long',
      notify: 'cannot be combined with reviewers: each reviewer is emailed their own link',
      quorum: 'must be at most the number of reviewers (2)',
      'veto.0': 'must be one of the options',
      remind_max: 'needs remind_every',
      'reviewers.1.email': 'is already a reviewer of this pause',
    });
  });
});
