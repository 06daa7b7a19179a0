import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventsOf, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Typed answers through the API (DESIGN.md, "Typed answers"; issue 25 item 1):
// a form on create, returned on the pause and the response link, answers with
// values checked and recorded, votes that keep their own values, the event and
// the timeline; and options that look alike unless the developer styles one.

let service: TestService;
let dev: Account;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
});
afterAll(() => service.destroy());

const schema = {
  type: 'object',
  properties: {
    amount: { type: 'number', minimum: 1, maximum: 5000, title: 'Amount (USD)' },
    note: { type: 'string', maxLength: 200, 'x-multiline': true },
  },
  required: ['amount'],
  additionalProperties: false,
};
const form = { schema, values: { amount: 1250 }, on: ['approve'] };
const refund = { title: 'Refund order 8812?', form, require_text: ['reject'] };

const respond = (token: string, body: object) => call(service.url, 'POST', `/v1/respond/${token}`, { body });
const read = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: dev.test })).body;
const respondedData = async (pauseId: string) => {
  const event = (await eventsOf(service, pauseId)).find((e) => e.type === 'pause.responded');
  return JSON.parse(event?.payload ?? '{}').data;
};
const fieldsOf = (reply: { body: { error: { details: { fields: { field: string }[] } } } }) =>
  reply.body.error.details.fields.map((f) => f.field);

describe('a pause with a form', () => {
  it('is created with its form, require_text (which implies allow_text) and shown on the pause and its link', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    expect(pause).toMatchObject({ form, require_text: ['reject'], allow_text: true, options_style: {} });
    expect(await read(pause.id)).toMatchObject({ form, require_text: ['reject'], allow_text: true });
    const question = await call(service.url, 'GET', `/v1/respond/${tokenOf(pause)}`);
    expect(question.body).toMatchObject({ form, require_text: ['reject'], allow_text: true, options_style: {} });
    // `on` left out: every option submits the form.
    const everyOption = await createPause(service.url, dev.test, { form: { schema, values: { amount: 10 } } });
    expect(everyOption.form).toEqual({ schema, values: { amount: 10 }, on: ['approve', 'reject'] });
    // A pause without a form says so.
    expect(await createPause(service.url, dev.test)).toMatchObject({ form: null, require_text: [], options_style: {} });
  });

  it('refuses each bad form with invalid_form, naming every bad field in details.fields', async () => {
    const cases: [object, string[]][] = [
      [{ form: { schema: { type: 'array' } } }, ['form.schema.type', 'form.schema.properties']],
      [{ form: { schema: { type: 'object', properties: { a: { type: 'strng' } } } } }, ['form.schema.properties.a']],
      [{ form: { schema, values: { amount: 0, extra: true } } }, ['form.values.extra', 'form.values.amount']],
      [{ form: { schema, values: { amount: 5 }, on: ['approve', 'later'] } }, ['form.on.1']],
      [
        { form: { schema: { type: 'object', properties: { a: { $ref: 'https://example.com/s' } } } } },
        ['form.schema.properties.a.$ref'],
      ],
      [
        {
          form: { schema: { type: 'object', properties: { a: { type: 'string', description: 'x'.repeat(16_400) } } } },
        },
        ['form.schema'],
      ],
      [{ form: { schema: 'not a schema' } }, ['form.schema']],
      [{ form, title: '' }, ['title']],
    ];
    for (const [body, fields] of cases) {
      const reply = await call(service.url, 'POST', '/v1/pause', {
        token: dev.test,
        body: { title: 'Refund?', ...body },
      });
      expect(reply.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(reply.body.error.code).toBe(fields.includes('title') ? 'invalid_request' : 'invalid_form');
      expect(fieldsOf(reply).sort()).toEqual([...fields].sort());
    }
  });

  it('takes a form without proposed values: an answer that submits it must send values, and is edited', async () => {
    const pause = await createPause(service.url, dev.test, { ...refund, form: { schema, on: ['approve'] } });
    expect(pause.form).toEqual({ schema, values: null, on: ['approve'] });
    const none = await respond(tokenOf(pause), { choice: 'approve' });
    expect(none.status).toBe(400);
    expect(fieldsOf(none)).toEqual(['values']);
    const reply = await respond(tokenOf(pause), { choice: 'approve', values: { amount: 10 } });
    expect(reply.body).toMatchObject({ status: 'responded', values: { amount: 10 }, edited: true });
    // A choice outside `on` records no values, and nothing was edited.
    const rejected = await createPause(service.url, dev.test, { ...refund, form: { schema, on: ['approve'] } });
    const no = await respond(tokenOf(rejected), { choice: 'reject', text: 'no' });
    expect(no.body).toMatchObject({ status: 'responded', values: null, edited: false });
  });

  it('refuses require_text and options_style that name no option, and require_text with allow_text false', async () => {
    const reply = await call(service.url, 'POST', '/v1/pause', {
      token: dev.test,
      body: { title: 'x', require_text: ['maybe'], options_style: { later: 'danger' }, allow_text: false },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
    expect(fieldsOf(reply).sort()).toEqual(['allow_text', 'options_style.later', 'require_text.0']);
    const style = await call(service.url, 'POST', '/v1/pause', {
      token: dev.test,
      body: { title: 'x', options_style: { approve: 'blink' } },
    });
    expect(style.status).toBe(400);
  });

  it('records edited values: edited true, and the event and the timeline carry them', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const reply = await respond(tokenOf(pause), { choice: 'approve', values: { note: 'partial', amount: 900 } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ status: 'responded', values: { amount: 900, note: 'partial' }, edited: true });
    expect((await read(pause.id)).response).toMatchObject({ values: { amount: 900, note: 'partial' }, edited: true });
    expect(await respondedData(pause.id)).toMatchObject({ choice: 'approve', values: { amount: 900 }, edited: true });
    const timeline = await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: dev.test });
    const responded = timeline.body.data.find((e: { type: string }) => e.type === 'responded');
    expect(responded.detail).toMatchObject({ values: { amount: 900, note: 'partial' }, edited: true });
  });

  it('keeps the proposed values when none are sent, or the same ones in another order: edited false', async () => {
    const kept = await createPause(service.url, dev.test, refund);
    const reply = await respond(tokenOf(kept), { choice: 'approve' });
    expect(reply.body).toMatchObject({ values: { amount: 1250 }, edited: false });
    expect(await respondedData(kept.id)).toMatchObject({ values: { amount: 1250 }, edited: false });
    const same = await createPause(service.url, dev.test, {
      ...refund,
      form: { ...form, values: { amount: 5, note: 'n' } },
    });
    const again = await respond(tokenOf(same), { choice: 'approve', values: { note: 'n', amount: 5 } });
    expect(again.body).toMatchObject({ values: { amount: 5, note: 'n' }, edited: false });
  });

  it('refuses bad values with invalid_values naming each field in plain words, and records nothing', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const reply = await respond(tokenOf(pause), {
      choice: 'approve',
      values: { amount: 9000, note: 7, colour: 'red' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_values');
    expect(reply.body.error.details.fields).toEqual(
      expect.arrayContaining([
        { field: 'values.amount', problem: 'must be at most 5000' },
        { field: 'values.note', problem: 'must be a string' },
        { field: 'values.colour', problem: 'is not a known field' },
      ]),
    );
    expect((await read(pause.id)).status).toBe('pending');
  });

  it('refuses values with a choice outside `on`, and a missing required reason naming text', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const outside = await respond(tokenOf(pause), { choice: 'reject', text: 'no', values: { amount: 1 } });
    expect(outside.status).toBe(400);
    expect(fieldsOf(outside)).toEqual(['values']);
    const noReason = await respond(tokenOf(pause), { choice: 'reject' });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.code).toBe('invalid_request');
    expect(noReason.body.error.details.fields).toEqual([
      { field: 'text', problem: 'is required: a reason must be given for "reject"' },
    ]);
    expect((await read(pause.id)).status).toBe('pending');
    // Spaces are no reason.
    const blank = await respond(tokenOf(pause), { choice: 'reject', text: '   ' });
    expect(blank.status).toBe(400);
    expect(fieldsOf(blank)).toEqual(['text']);
    // With its reason, the choice outside `on` records no values.
    const rejected = await respond(tokenOf(pause), { choice: 'reject', text: 'duplicate order' });
    expect(rejected.body).toMatchObject({ status: 'responded', values: null, edited: false });
    expect(await respondedData(pause.id)).toMatchObject({ text: 'duplicate order', values: null, edited: false });
  });

  it('refuses values on a pause without a form', async () => {
    const plain = await createPause(service.url, dev.test);
    const withValues = await respond(tokenOf(plain), { choice: 'approve', values: { a: 1 } });
    expect(withValues.status).toBe(400);
    expect(fieldsOf(withValues)).toEqual(['values']);
    const ok = await respond(tokenOf(plain), { choice: 'approve' });
    expect(ok.body).toMatchObject({ values: null, edited: false });
    // A pause without a form has the event its SPEC describes, no more.
    expect(Object.keys(await respondedData(plain.id)).sort()).toEqual(['choice', 'metadata', 'response_at', 'text']);
  });

  it('takes the response page’s post without values: the proposed values stand, a required reason is enforced', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const page = (body: string) =>
      fetch(`${service.url}/r/${tokenOf(pause)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      });
    const noReason = await page('choice=reject');
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain('a reason must be given');
    expect((await page('choice=approve')).status).toBe(303);
    expect((await read(pause.id)).response).toMatchObject({
      choice: 'approve',
      values: { amount: 1250 },
      edited: false,
    });
  });
});

describe('named reviewers with a form', () => {
  it('keeps each vote’s own values; the deciding vote’s are the outcome’s', async () => {
    const pause = await createPause(service.url, dev.test, {
      ...refund,
      reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }, { email: 'cy@example.com' }],
      quorum: 2,
    });
    const [ann, bob, cy] = pause.reviewers;
    const first = await respond(tokenOf(ann), { choice: 'approve', values: { amount: 1000 } });
    expect(first.body).toMatchObject({ status: 'pending', values: null, your_vote: { values: { amount: 1000 } } });
    const refused = await respond(tokenOf(bob), { choice: 'approve', values: { amount: -5 } });
    expect(refused.status).toBe(400);
    expect(fieldsOf(refused)).toEqual(['values.amount']);
    const noReason = await respond(tokenOf(bob), { choice: 'reject' });
    expect(fieldsOf(noReason)).toEqual(['text']);
    const second = await respond(tokenOf(cy), { choice: 'approve' });
    expect(second.body).toMatchObject({ status: 'responded', values: { amount: 1250 }, edited: false });

    const decided = await read(pause.id);
    expect(decided.response).toMatchObject({ choice: 'approve', values: { amount: 1250 }, edited: false });
    expect(decided.response.votes.map((v: { email: string; values: unknown }) => [v.email, v.values])).toEqual([
      ['ann@example.com', { amount: 1000 }],
      ['cy@example.com', { amount: 1250 }],
    ]);
    expect(decided.reviewers[0].vote).toMatchObject({ values: { amount: 1000 } });
    expect(await respondedData(pause.id)).toMatchObject({ values: { amount: 1250 }, edited: false });
    const voted = (await eventsOf(service, pause.id))
      .filter((e) => e.type === 'pause.voted')
      .map((e) => JSON.parse(e.payload).data.values);
    expect(voted).toEqual([{ amount: 1000 }, { amount: 1250 }]);
    const timeline = await call(service.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: dev.test });
    const details = timeline.body.data
      .filter((e: { type: string }) => e.type === 'voted' || e.type === 'responded')
      .map((e: { type: string; detail: { values: unknown } }) => [e.type, e.detail.values]);
    expect(details).toEqual([
      ['voted', { amount: 1000 }],
      ['voted', { amount: 1250 }],
      ['responded', { amount: 1250 }],
    ]);
    // Another reviewer sees the outcome, not the decider's values.
    const seen = await call(service.url, 'GET', `/v1/respond/${tokenOf(bob)}`);
    expect(seen.body.response).toMatchObject({ choice: 'approve', values: null });
  });

  it('records the deciding vote’s edited values as the outcome', async () => {
    const pause = await createPause(service.url, dev.test, {
      ...refund,
      reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }],
      quorum: 1,
    });
    const reply = await respond(tokenOf(pause.reviewers[1]), { choice: 'approve', values: { amount: 42 } });
    expect(reply.body).toMatchObject({ status: 'responded', values: { amount: 42 }, edited: true });
    expect((await read(pause.id)).response).toMatchObject({ values: { amount: 42 }, edited: true });
  });
});

describe('options_style', () => {
  it('round-trips on the pause and its link', async () => {
    const pause = await createPause(service.url, dev.test, { options_style: { reject: 'danger', approve: 'primary' } });
    expect(pause.options_style).toEqual({ reject: 'danger', approve: 'primary' });
    expect((await read(pause.id)).options_style).toEqual({ reject: 'danger', approve: 'primary' });
    const question = await call(service.url, 'GET', `/v1/respond/${tokenOf(pause)}`);
    expect(question.body.options_style).toEqual({ reject: 'danger', approve: 'primary' });
  });
});
