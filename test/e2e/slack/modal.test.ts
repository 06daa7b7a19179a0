import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type PostedMessage, type SlackStandin, startSlackStandin } from '../../helpers/slack-standin.js';

// A choice that needs a reason, or submits the form, opens a modal
// (views.open) with the same fields as Block Kit inputs; its submission is
// read and checked as the response page's form is, and each problem goes
// back beside its input (response_action: errors) in the page's words.

const CHANNEL = 'C0MODAL001';
let slack: SlackStandin;
let service: TestService;
let dev: Account;

beforeAll(async () => {
  slack = await startSlackStandin();
  slack.addUser({ id: 'U0ANN', email: 'ann@example.com', name: 'Ann Example' });
  slack.addUser({ id: 'U0BOB', email: 'bob@example.com', name: 'Bob Example' });
  service = await startTestService({
    env: slack.env('http'),
  });
  dev = await registerAccount(service.url);
});
afterAll(async () => {
  await service?.destroy();
  await slack?.close();
});

async function posted(body: Record<string, unknown>): Promise<[any, PostedMessage]> {
  const title = `Modal ${Math.random().toString(36).slice(2, 8)}`;
  const pause = await createPause(service.url, dev.live, {
    title,
    options: ['approve', 'reject'],
    notify: { slack: { channel: CHANNEL } },
    ...body,
  });
  return [pause, await slack.messageAbout(title)];
}

async function modalFor(message: PostedMessage, choice: string): Promise<Record<string, any>> {
  const before = slack.openedViews().length;
  await slack.click(service.url, message, choice, 'U0ANN');
  await eventually(() => expect(slack.openedViews().length).toBe(before + 1));
  return slack.openedViews().at(-1)!;
}

const readPause = async (id: string) => (await call(service.url, 'GET', `/v1/pause/${id}`, { token: dev.live })).body;

describe('a modal', () => {
  it('takes a required reason: refused empty beside its input, then recorded', async () => {
    const [pause, message] = await posted({ require_text: ['reject'] });
    const view = await modalFor(message, 'reject');
    expect(view.submit.text).toBe('reject');
    const reason = view.blocks.find((b: any) => b.block_id === 'text');
    expect(reason).toMatchObject({ type: 'input', optional: false, element: { type: 'plain_text_input' } });

    const empty = await slack.submitView(service.url, view, 'U0ANN', {});
    expect(empty.status).toBe(200);
    expect(empty.body.response_action).toBe('errors');
    // The API's words for the same answer, beside the same field.
    const api = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'reject' } });
    expect(api.status).toBe(400);
    const apiProblem = api.body.error.details.fields.find((f: any) => f.field === 'text').problem;
    expect(empty.body.errors).toEqual({ text: apiProblem });
    expect((await readPause(pause.id)).status).toBe('pending');

    const given = await slack.submitView(service.url, view, 'U0ANN', { text: { value: 'Too risky on a Friday' } });
    expect(given.body).toEqual({ response_action: 'clear' });
    const read = await readPause(pause.id);
    expect(read.response).toMatchObject({ choice: 'reject', text: 'Too risky on a Friday' });
    expect(read.response.responded_by).toMatchObject({ slack_user_id: 'U0ANN' });
  });

  it("shows the form's fields prefilled, refuses bad values in the page's words, and records the edited values", async () => {
    const form = {
      schema: {
        type: 'object',
        properties: {
          amount: { type: 'number', minimum: 0, maximum: 5000, title: 'Amount (USD)' },
          reason: { type: 'string', enum: ['damaged', 'late'], title: 'Reason' },
          notify: { type: 'boolean', title: 'Tell the customer' },
        },
        required: ['amount'],
      },
      values: { amount: 1250, reason: 'late' },
      on: ['approve'],
    };
    const [pause, message] = await posted({ form });
    const view = await modalFor(message, 'approve');
    const amount = view.blocks.find((b: any) => b.block_id === 'values.amount');
    expect(amount).toMatchObject({
      optional: false,
      label: { text: 'Amount (USD)' },
      element: { type: 'number_input', initial_value: '1250', is_decimal_allowed: true },
    });
    const reason = view.blocks.find((b: any) => b.block_id === 'values.reason');
    expect(reason.element.type).toBe('static_select');
    expect(reason.element.initial_option.value).toBe('late');
    expect(view.blocks.find((b: any) => b.block_id === 'values.notify').element.type).toBe('checkboxes');
    expect(view.blocks.some((b: any) => b.block_id === 'text')).toBe(false); // no reason offered

    const keep = { 'values.reason': { selected_option: { value: 'late' } } };
    const unreadable = await slack.submitView(service.url, view, 'U0ANN', {
      ...keep,
      'values.amount': { value: 'lots' },
    });
    expect(unreadable.body).toEqual({ response_action: 'errors', errors: { 'values.amount': 'must be a number' } });
    const tooMuch = await slack.submitView(service.url, view, 'U0ANN', { ...keep, 'values.amount': { value: '9000' } });
    const api = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: 'approve', values: { amount: 9000, reason: 'late' } },
    });
    const apiProblem = api.body.error.details.fields.find((f: any) => f.field === 'values.amount').problem;
    expect(tooMuch.body).toEqual({ response_action: 'errors', errors: { 'values.amount': apiProblem } });
    expect((await readPause(pause.id)).status).toBe('pending');

    const fine = await slack.submitView(service.url, view, 'U0ANN', {
      'values.amount': { value: '1000' },
      'values.reason': { selected_option: { value: 'damaged' } },
      'values.notify': { selected_options: [{ value: 'true' }] },
    });
    expect(fine.body).toEqual({ response_action: 'clear' });
    const read = await readPause(pause.id);
    expect(read.response).toMatchObject({
      choice: 'approve',
      values: { amount: 1000, reason: 'damaged', notify: true },
      edited: true,
    });
  });

  it("is acknowledged within Slack's 3 s when users.info is slow: closed, nothing recorded, the clicker told", async () => {
    const [pause, message] = await posted({ require_text: ['reject'] });
    const view = await modalFor(message, 'reject');
    slack.delay('users.info', 4000);
    try {
      const started = Date.now();
      const slow = await slack.submitView(service.url, view, 'U0ANN', { text: { value: 'too slow' } });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(slow.body).toEqual({ response_action: 'clear' });
      await eventually(() =>
        expect(slack.ephemeralsTo('U0ANN')).toContain(
          'Your Slack profile could not be read, so your answer was not recorded; try again.',
        ),
      );
      expect((await readPause(pause.id)).status).toBe('pending');
    } finally {
      slack.delay('users.info', 0);
    }
  });

  it("the service's stop waits for a click's answer that follows the acknowledgement", async () => {
    const own = await startTestService({ env: slack.env('http') });
    try {
      const account = await registerAccount(own.url);
      const asked = `Stopping ${Math.random().toString(36).slice(2, 8)}`;
      await createPause(own.url, account.live, {
        title: asked,
        options: ['approve', 'reject'],
        notify: { slack: { channel: 'C0123456789' } },
      });
      const message = await slack.messageAbout(asked);
      slack.delay('users.info', 800);
      const clicked = await slack.click(own.url, message, 'approve', 'U0BOB');
      expect(clicked.status).toBe(200);
    } finally {
      await own.destroy();
      slack.delay('users.info', 0);
    }
    // Answered before the service stopped: recorded, and told.
    expect(slack.ephemeralsTo('U0BOB')).toContain('Recorded: approve. The question is decided.');
  });

  it('a payload not in the shape Slack documents is 400 and records nothing, a click or a submission', async () => {
    const [pause, message] = await posted({ require_text: ['reject'] });
    const view = await modalFor(message, 'reject');
    const infoBefore = slack.callsOf('users.info').length;
    const post = (payload: unknown) =>
      slack.postSigned(service.url, `payload=${encodeURIComponent(JSON.stringify(payload))}`);
    const click = slack.blockActions(message, 'approve', 'U0ANN') as any;
    expect((await post({ ...click, actions: [] })).status).toBe(400);
    expect((await post({ ...click, actions: [{ block_id: click.actions[0].block_id, value: 7 }] })).status).toBe(400);
    expect((await post({ ...click, user: {} })).status).toBe(400);
    const submission = {
      type: 'view_submission',
      user: { id: 'U0ANN' },
      view: { ...view, state: { values: { text: { value: { type: 'plain_text_input', value: 'x' } } } } },
    };
    expect((await post({ ...submission, view: { ...submission.view, private_metadata: 'not json' } })).status).toBe(
      400,
    );
    expect(
      (await post({ ...submission, view: { ...submission.view, private_metadata: JSON.stringify({ p: 1 }) } })).status,
    ).toBe(400);
    expect((await post({ ...submission, view: { ...submission.view, state: { values: 'x' } } })).status).toBe(400);
    expect(slack.callsOf('users.info').length).toBe(infoBefore);
    expect((await readPause(pause.id)).status).toBe('pending');
  });

  it("a modal answers only a question posted to a channel or a reviewer's, as a button does", async () => {
    const [, message] = await posted({ require_text: ['reject'] });
    const view = await modalFor(message, 'reject');
    // A pause that was never posted to Slack, named in the modal's metadata.
    const other = await createPause(service.url, dev.live, { title: 'Not in Slack', options: ['approve', 'reject'] });
    const metadata = JSON.parse(view.private_metadata);
    const moved = { ...view, private_metadata: JSON.stringify({ ...metadata, p: other.id }) };
    const answer = await slack.submitView(service.url, moved, 'U0ANN', { text: { value: 'no' } });
    expect(answer.body).toEqual({ response_action: 'clear' });
    await eventually(() =>
      expect(slack.ephemeralsTo('U0ANN')).toContain(
        'This button belongs to no question this service knows; nothing was recorded.',
      ),
    );
    expect((await readPause(other.id)).status).toBe('pending');
  });

  it('a submission for a question already answered closes the modal and says why to the clicker alone', async () => {
    const [pause, message] = await posted({ require_text: ['reject'] });
    const view = await modalFor(message, 'reject');
    await slack.click(service.url, message, 'approve', 'U0ANN');
    await eventually(async () => expect((await readPause(pause.id)).response?.choice).toBe('approve'));
    const late = await slack.submitView(service.url, view, 'U0ANN', { text: { value: 'no' } });
    expect(late.body).toEqual({ response_action: 'clear' });
    await eventually(() =>
      expect(
        slack
          .callsOf('chat.postEphemeral')
          .map((c) => String(c.args.text))
          .some((t) => t.startsWith('This pause has already been answered.')),
      ).toBe(true),
    );
  });
});
