import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { MAX_POSTED_FORM_BYTES } from '../../../src/domain/form-fields.js';
import { ConsoleClient, csrfIn } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { InboxClient } from '../../helpers/inbox.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp.js';

// A form answered where people answer (issue 25, item 2), over real HTTP: the
// response page, a reviewer's personal page and the inbox post the form's
// fields as text; a choice that submits the form records them as typed
// values (edited or not), another choice ignores them, and a field that
// cannot be read or does not meet the schema brings the page back (400) with
// its error beside it and what was typed. The console shows the values
// beside the proposed ones. (In Chromium: form-browser.test.ts.)

let smtp: SmtpReceiver;
let service: TestService;
let dev: Account;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startTestService({ env: { SMTP_URL: smtp.url, EMAIL_FROM: 'pausepoint <approvals@example.com>' } });
  dev = await registerAccount(service.url);
});

afterAll(async () => {
  await service?.destroy();
  await smtp?.close();
});

const schema = {
  type: 'object',
  properties: {
    amount: { type: 'number', minimum: 1, maximum: 5000, title: 'Amount (USD)' },
    reason: { type: 'string', enum: ['damaged', 'late', 'other'], title: 'Reason' },
    notify: { type: 'boolean', title: 'Tell the customer' },
    lines: { type: 'array', items: { type: 'object' }, title: 'Order lines' },
  },
  required: ['amount', 'reason'],
  additionalProperties: false,
};
const proposed = { amount: 1250, reason: 'damaged', notify: true, lines: [{ sku: 'A1', qty: 2 }] };
const refund = {
  title: 'Refund order 8812?',
  form: { schema, values: proposed, on: ['approve'] },
  require_text: ['reject'],
};

/** The fields of the page as drawn with the proposed values, changed as given (undefined: not posted). */
function fieldsOf(changes: Record<string, string | undefined> = {}): Record<string, string> {
  const fields: Record<string, string | undefined> = {
    form: 'drawn',
    'values.amount': '1250',
    'values.reason': 'damaged',
    'values.notify': 'true',
    'values.lines': JSON.stringify(proposed.lines, null, 2).replaceAll('\n', '\r\n'),
    ...changes,
  };
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

const postPage = (token: string, form: Record<string, string>) =>
  fetch(`${service.url}/r/${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });

const readPause = async (id: string, key = dev.test) =>
  (await call(service.url, 'GET', `/v1/pause/${id}`, { token: key })).body;

describe('the response page’s form', () => {
  it('draws the inputs prefilled with the proposed values', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const html = await (await fetch(`${service.url}/r/${tokenOf(pause)}`)).text();
    expect(html).toContain('name="values.amount" value="1250"');
    expect(html).toContain('<option value="damaged" selected="">damaged</option>');
    expect(html).toMatch(/<input type="checkbox" id="field-2" name="values.notify" value="true" checked=""\/>/);
    expect(html).toContain('&quot;sku&quot;: &quot;A1&quot;');
    expect(html).toContain('value="reject" formnovalidate=""');
  });

  it('approve with edits records the typed values, edited true', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const reply = await postPage(
      tokenOf(pause),
      fieldsOf({ choice: 'approve', 'values.amount': '900.5', 'values.notify': undefined, 'values.reason': 'late' }),
    );
    expect(reply.status, await reply.text()).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({
      choice: 'approve',
      values: { amount: 900.5, reason: 'late', notify: false, lines: proposed.lines },
      edited: true,
    });
  });

  it('approve with the fields as drawn keeps the proposed values exactly, edited false', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    expect((await postPage(tokenOf(pause), fieldsOf({ choice: 'approve' }))).status).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({ values: proposed, edited: false });
  });

  it('reject ignores the fields, even ones that could not be read', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const reply = await postPage(
      tokenOf(pause),
      fieldsOf({ choice: 'reject', text: 'Not ours', 'values.amount': 'lots', 'values.lines': '{' }),
    );
    expect(reply.status).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({ choice: 'reject', values: null, edited: false });
  });

  it('a bad field brings the page back (400): the error beside its field, what was typed kept, nothing recorded', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const reply = await postPage(
      tokenOf(pause),
      fieldsOf({ choice: 'approve', 'values.amount': '12 dollars', 'values.lines': '[{"sku": }]', text: 'Fine <ok>' }),
    );
    expect(reply.status).toBe(400);
    const html = await reply.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('<a href="#field-0">Amount (USD)</a> must be a number');
    expect(html).toContain('<p class="field-error" id="field-0-error">must be a number</p>');
    expect(html).toContain('aria-invalid="true" aria-describedby="field-0-error" value="12 dollars"');
    expect(html).toMatch(/<p class="field-error" id="field-3-error">is not valid JSON: [^<]+<\/p>/);
    expect(html).toContain('[{&quot;sku&quot;: }]</textarea>');
    expect(html).toContain('Fine &lt;ok&gt;</textarea>');
    // The schema's own checks, beside their field too.
    const over = await postPage(tokenOf(pause), fieldsOf({ choice: 'approve', 'values.amount': '9000' }));
    expect(over.status).toBe(400);
    expect(await over.text()).toContain('<p class="field-error" id="field-0-error">must be at most 5000</p>');
    expect((await readPause(pause.id)).status).toBe('pending');
  });

  it('a missing required reason is named beside the comment box', async () => {
    const pause = await createPause(service.url, dev.test, refund);
    const reply = await postPage(tokenOf(pause), fieldsOf({ choice: 'reject', text: '  ' }));
    expect(reply.status).toBe(400);
    const html = await reply.text();
    expect(html).toContain('<a href="#text">Comment</a> is required: a reason must be given for &quot;reject&quot;');
    expect(html).toMatch(/<p class="field-error" id="text-error">is required: a reason must be given/);
    expect(html).toContain('aria-describedby="text-hint text-error" aria-invalid="true"');
  });

  it('a form without proposed values starts empty; answering it is edited', async () => {
    const pause = await createPause(service.url, dev.test, { ...refund, form: { schema, on: ['approve'] } });
    const html = await (await fetch(`${service.url}/r/${tokenOf(pause)}`)).text();
    expect(html).toContain('name="values.amount" value=""');
    expect(html).toContain('<option value="">Choose…</option>');
    const empty = await postPage(tokenOf(pause), { form: 'drawn', choice: 'approve', 'values.amount': '' });
    expect(empty.status).toBe(400);
    const emptyHtml = await empty.text();
    expect(emptyHtml).toContain('<a href="#field-0">Amount (USD)</a> is required');
    expect(emptyHtml).toContain('<a href="#field-1">Reason</a> is required');
    const reply = await postPage(tokenOf(pause), {
      form: 'drawn',
      choice: 'approve',
      'values.amount': '40',
      'values.reason': 'other',
    });
    expect(reply.status).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({
      values: { amount: 40, reason: 'other', notify: false },
      edited: true,
    });
  });

  it('keeps the proposed keys the schema has no field for: answered as drawn, the values are the proposed ones', async () => {
    const open = { type: 'object', properties: { to: { type: 'string', format: 'email' } }, required: ['to'] };
    const draft = { to: 'ada@example.com', subject: 'Your refund', thread_id: 7 };
    const pause = await createPause(service.url, dev.test, { ...refund, form: { schema: open, values: draft } });
    const reply = await postPage(tokenOf(pause), { form: 'drawn', choice: 'approve', 'values.to': 'ada@example.com' });
    expect(reply.status).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({ values: draft, edited: false });
  });

  it('fields named after Object.prototype’s members, left out of the post, are read as empty (no 500)', async () => {
    const named = {
      type: 'object',
      properties: { constructor: { type: 'string' }, toString: { type: 'number' } },
    };
    const pause = await createPause(service.url, dev.test, { ...refund, form: { schema: named, on: ['approve'] } });
    const reply = await postPage(tokenOf(pause), { form: 'drawn', choice: 'approve' });
    expect(reply.status, (await reply.text()).match(/<div class="notice error summary"[\s\S]*?<\/div>/)?.[0]).toBe(303);
    expect((await readPause(pause.id)).response).toMatchObject({ values: {}, edited: true });
  });

  it('takes a body as large as a form’s values and a comment can be, and refuses a larger one', async () => {
    const pause = await createPause(service.url, dev.test, {
      ...refund,
      form: { schema: { type: 'object', properties: { doc: { type: 'string' } } }, on: ['approve'] },
    });
    // 60,000 characters of a form field and a comment of 10,000 three-byte characters, percent-encoded.
    const large = fieldsOf({ choice: 'approve', 'values.doc': 'x'.repeat(60_000), text: '€'.repeat(10_000) });
    const taken = await postPage(tokenOf(pause), large);
    expect(taken.status).toBe(303);
    const other = await createPause(service.url, dev.test, refund);
    const tooLarge = await postPage(tokenOf(other), { ...large, 'values.doc': 'x'.repeat(MAX_POSTED_FORM_BYTES) });
    expect(tooLarge.status).toBe(413);
    expect((await readPause(other.id)).status).toBe('pending');
  });
});

describe('a reviewer’s page, the inbox and the console', () => {
  it('a personal link’s vote and an inbox vote carry their own values; the console shows them beside the proposed', async () => {
    const ann = `ann.${Date.now()}@example.com`;
    const bob = `bob.${Date.now()}@example.com`;
    const pause = await createPause(service.url, dev.live, {
      ...refund,
      reviewers: [{ email: ann }, { email: bob }],
      quorum: 2,
    });
    const [annRef] = pause.reviewers;
    // Ann on her personal page: a bad field first, then an edit.
    const bad = await postPage(tokenOf(annRef), fieldsOf({ choice: 'approve', 'values.amount': '0' }));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('<p class="field-error" id="field-0-error">must be at least 1</p>');
    expect((await postPage(tokenOf(annRef), fieldsOf({ choice: 'approve', 'values.amount': '1000' }))).status).toBe(
      303,
    );

    // Bob in his inbox: the card's form, a bad field shown in that card, then a vote as drawn.
    const inbox = new InboxClient(service.url);
    await inbox.signInByEmail(bob, smtp);
    const page = await inbox.get('/inbox');
    expect(page.text).toContain('name="values.amount" value="1250"');
    expect(page.text).toContain('id="field-0-0"');
    const csrf = csrfIn(page.text);
    const refused = await inbox.post(
      `/inbox/vote/${pause.id}`,
      fieldsOf({ csrf, choice: 'approve', 'values.lines': 'not json' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Your vote was not recorded');
    expect(refused.text).toMatch(/<p class="field-error" id="field-0-3-error">is not valid JSON/);
    expect(refused.text).toContain('>\nnot json</textarea>');
    expect(refused.text).toContain('name="values.notify" value="true" checked=""');
    const voted = await inbox.post(`/inbox/vote/${pause.id}`, fieldsOf({ csrf, choice: 'approve' }));
    expect(voted.status, voted.text).toBe(303);

    const decided = await readPause(pause.id, dev.live);
    expect(decided.status).toBe('responded');
    const votes = Object.fromEntries(
      decided.reviewers.map((r: { email: string; vote: { values: object } }) => [r.email, r.vote.values]),
    );
    expect(votes).toEqual({ [ann]: { ...proposed, amount: 1000 }, [bob]: proposed });

    // The console: each vote's values, the changed field marked in words.
    const developer = new ConsoleClient(service.url);
    await developer.signIn(dev.email, dev.password);
    const html = (await developer.get(`/console/pauses/${pause.id}`)).text;
    expect(html).toContain('Values (1 changed)');
    expect(html).toMatch(
      /<dd class="changed"><code>1000<\/code><span class="was"> <strong class="mark">changed<\/strong>, proposed <code>1250<\/code>/,
    );
    expect(html).toContain('Values (as proposed)');
    expect(html).toContain('Kept (as proposed)');
  });
});

describe('an answer that can no longer be taken', () => {
  it('a reviewer who already voted is told so, not about the fields they sent', async () => {
    const ann = `ann.${Date.now()}@example.com`;
    const pause = await createPause(service.url, dev.live, {
      ...refund,
      reviewers: [{ email: ann }, { email: `bob.${Date.now()}@example.com` }],
      quorum: 2,
    });
    const [annRef] = pause.reviewers;
    expect((await postPage(tokenOf(annRef), fieldsOf({ choice: 'approve' }))).status).toBe(303);
    const again = await postPage(tokenOf(annRef), fieldsOf({ choice: 'approve', 'values.amount': 'lots' }));
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('You have already voted on this question');
    expect(html).not.toContain('field-error');
  });

  it('a pause past its deadline, not yet expired by the worker, is closed, whatever the fields say', async () => {
    // Only the API runs: no worker sweeps the pause before the answer arrives.
    let offsetMs = 0;
    const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
    const apiOnly = await startTestService({ clock, env: { ROLE: 'api' } });
    try {
      const owner = await registerAccount(apiOnly.url);
      const pause = await createPause(apiOnly.url, owner.test, { ...refund, expires_in: 60 });
      offsetMs = 2 * 60 * 1000;
      const reply = await fetch(`${apiOnly.url}/r/${tokenOf(pause)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fieldsOf({ choice: 'approve', 'values.amount': 'lots' })).toString(),
        redirect: 'manual',
      });
      expect(reply.status).toBe(410);
      const html = await reply.text();
      expect(html).toContain('This question is closed');
      expect(html).not.toContain('field-error');
    } finally {
      await apiOnly.destroy();
    }
  });
});
