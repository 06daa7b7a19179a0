import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWebhookEvent, signWebhookPayload } from '../../../sdk/src/webhooks.js';
import type { Clock } from '../../../src/domain/clock.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventsOf, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type SlackStandin, startSlackStandin } from '../../helpers/slack-standin.js';

// notify.slack: {channel}: the Slack app posts the question with one button
// per option; a click answers as the shared link would (first answer wins),
// recording the Slack user; HTTP mode's signatures; Slack's 429.

const SCHEDULE = [200, 400, 600];
const CHANNEL = 'C0123456789';

let slack: SlackStandin;
let service: TestService;
let dev: Account;

beforeAll(async () => {
  slack = await startSlackStandin();
  slack.addUser({ id: 'U0ANN', email: 'ann@example.com', name: 'Ann Example' });
  slack.addUser({ id: 'U0BOB', email: 'bob@example.com', name: 'Bob Example' });
  slack.addUser({ id: 'U0UNC', email: 'unc@example.com', name: 'Una', emailConfirmed: false });
  slack.addUser({ id: 'U0DEL', email: 'del@example.com', name: 'Del', deleted: true });
  slack.addUser({ id: 'U0EXT', email: 'ext@example.com', name: 'Ext', isStranger: true, teamId: 'T0OTHER' });
  slack.addUser({ id: 'U0BOT1', email: 'bot@example.com', name: 'Bot', isBot: true });
  service = await startTestService({
    env: { ...slack.env('http'), WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(',') },
  });
  dev = await registerAccount(service.url);
});
afterAll(async () => {
  await service?.destroy();
  await slack?.close();
});

const readPause = async (id: string, key = dev.live) =>
  (await call(service.url, 'GET', `/v1/pause/${id}`, { token: key })).body;

/** Creates a live pause posted to a channel, and waits until the stand-in has the message. */
async function postedQuestion(body: Record<string, unknown> = {}) {
  const pause = await createPause(service.url, dev.live, {
    title: `Deploy ${Math.random().toString(36).slice(2, 8)}?`,
    options: ['approve', 'reject'],
    expires_in: 3600,
    notify: { slack: { channel: CHANNEL } },
    ...body,
  });
  return { pause, message: await slack.messageAbout(pause.title) };
}

const ephemeralsTo = (user: string) => slack.ephemeralsTo(user);

describe('notify.slack', () => {
  it('posts the question with one button per option, with the bot token, as Block Kit', async () => {
    const { pause, message } = await postedQuestion({
      body: '14 commits <@U0ALL> *bold*',
      options_style: { reject: 'danger' },
    });
    const post = slack.callsOf('chat.postMessage').find((c) => String(c.args.text).includes(pause.title))!;
    expect(post.authorization).toBe(`Bearer ${slack.botToken}`);
    expect(post.args.channel).toBe(CHANNEL);
    const buttons = message.blocks.find((b) => b.type === 'actions')!.elements;
    expect(buttons.map((b: any) => [b.value, b.text.type, b.style])).toEqual([
      ['approve', 'plain_text', undefined],
      ['reject', 'plain_text', 'danger'],
    ]);
    // What a person wrote is plain text: no mention or formatting is read into it.
    const section = message.blocks.find((b) => b.type === 'section')!;
    expect(section.text).toMatchObject({ type: 'plain_text', text: '14 commits <@U0ALL> *bold*' });
    await eventually(async () => {
      const read = await readPause(pause.id);
      expect(read.notifications).toMatchObject([{ channel: 'slack', to: CHANNEL, status: 'sent' }]);
    });
  });

  it('a click answers through the same action as the page: first answer wins, the Slack user recorded', async () => {
    const { pause, message } = await postedQuestion();
    const clicked = await slack.click(service.url, message, 'approve', 'U0ANN');
    expect(clicked.status).toBe(200);
    await eventually(async () => {
      const read = await readPause(pause.id);
      expect(read.status).toBe('responded');
      expect(read.response.choice).toBe('approve');
      expect(read.response.responded_by).toEqual({
        slack_user_id: 'U0ANN',
        email: 'ann@example.com',
        name: 'Ann Example',
      });
    });
    await eventually(() => expect(ephemeralsTo('U0ANN')).toContain('Recorded: approve. The question is decided.'));
    // Its pause.responded event names the Slack user too.
    const [event] = (await eventsOf(service, pause.id)).filter((e) => e.type === 'pause.responded');
    expect(JSON.parse(event!.payload).data.responded_by).toEqual({
      slack_user_id: 'U0ANN',
      email: 'ann@example.com',
      name: 'Ann Example',
    });
    // The SDK's webhook check takes it (as a receiver would, signed).
    const secret = 'whsec_test_slack';
    const parsed = await parseWebhookEvent(event!.payload, await signWebhookPayload(event!.payload, secret), secret);
    expect(parsed.event === 'pause.responded' && parsed.data.responded_by).toMatchObject({ slack_user_id: 'U0ANN' });
    // A second click (anyone's) records nothing: the page's rule, said to the clicker alone.
    const again = await slack.click(service.url, message, 'reject', 'U0BOB');
    expect(again.status).toBe(200);
    await eventually(() =>
      expect(ephemeralsTo('U0BOB').some((t) => t.includes('already been answered') && t.includes('Nothing'))).toBe(
        true,
      ),
    );
    const read = await readPause(pause.id);
    expect(read.response.choice).toBe('approve');
    // The message is updated: the outcome and who decided, no buttons left.
    await eventually(() => {
      const update = message.updates.at(-1);
      expect(update).toBeDefined();
      expect(JSON.stringify(update!.blocks)).toContain('Decided: approve (by Ann Example)');
      expect(update!.blocks.some((b) => b.type === 'actions')).toBe(false);
    });
  });

  it("an agent waiting through MCP learns the Slack user who answered, in the tool's output schema", async () => {
    const { pause, message } = await postedQuestion();
    await slack.click(service.url, message, 'reject', 'U0BOB');
    await eventually(async () => expect((await readPause(pause.id)).status).toBe('responded'));
    const client = new Client({ name: 'pausepoint-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${dev.live}` } },
      }),
    );
    try {
      // The SDK's client checks structuredContent against the tool's declared output schema.
      const result = (await client.callTool({
        name: 'wait_for_human',
        arguments: { pause_id: pause.id },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        status: 'responded',
        choice: 'reject',
        responded_by: { slack_user_id: 'U0BOB', email: 'bob@example.com', name: 'Bob Example' },
      });
      expect(JSON.stringify(result.content)).toContain('answered in Slack by Bob Example');
    } finally {
      await client.close();
    }
  });

  it('refuses a forged, unsigned or stale interaction with 401 and records nothing', async () => {
    const { pause, message } = await postedQuestion();
    const before = slack.calls.length;
    const forged = await slack.click(service.url, message, 'approve', 'U0ANN', { secret: 'not-the-secret' });
    expect(forged.status).toBe(401);
    const stale = await slack.click(service.url, message, 'approve', 'U0ANN', {
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    expect(stale.status).toBe(401);
    const future = await slack.click(service.url, message, 'approve', 'U0ANN', {
      timestamp: Math.floor(Date.now() / 1000) + 301,
    });
    expect(future.status).toBe(401);
    const garbled = await slack.click(service.url, message, 'approve', 'U0ANN', { signature: 'v0=00' });
    expect(garbled.status).toBe(401);
    const unsigned = await fetch(`${service.url}/slack/interactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'payload=%7B%7D',
    });
    expect(unsigned.status).toBe(401);
    // Within the window (4 minutes old) it is taken: the check is the window, not the second.
    const recent = await slack.click(service.url, message, 'reject', 'U0BOB', {
      timestamp: Math.floor(Date.now() / 1000) - 240,
    });
    expect(recent.status).toBe(200);
    await eventually(async () => expect((await readPause(pause.id)).response?.choice).toBe('reject'));
    // The refused ones made no call to Slack at all (not even users.info).
    const refusedCalls = slack.calls.slice(before).filter((c) => c.method === 'users.info');
    expect(refusedCalls.length).toBe(1);
  });

  it('an unconfirmed, deactivated, external or bot user is refused, said to them alone, nothing recorded', async () => {
    const { pause, message } = await postedQuestion();
    const refused = ['U0UNC', 'U0DEL', 'U0EXT', 'U0BOT1'];
    for (const user of refused) expect((await slack.click(service.url, message, 'approve', user)).status).toBe(200);
    const text =
      'Only a confirmed member of this workspace (not a deactivated, bot or external account) can answer; nothing was recorded.';
    await eventually(() => {
      for (const user of refused) expect(ephemeralsTo(user)).toContain(text);
    });
    const read = await readPause(pause.id);
    expect(read.status).toBe('pending');
    // The bot's workspace was asked once (auth.test), and kept.
    expect(slack.callsOf('auth.test')).toHaveLength(1);
  });

  it("a title or option is never read as Slack markup: the fallback text and the clicker's message are escaped", async () => {
    const { pause, message } = await postedQuestion({
      title: `<!channel> <https://evil.example|ok> & ${Math.random().toString(36).slice(2, 8)}`,
      options: ['<!here>', 'reject'],
    });
    const escaped = pause.title.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    expect(message.text).toBe(`Decision needed: ${escaped}`);
    expect(message.text).not.toContain('<');
    await slack.click(service.url, message, '<!here>', 'U0ANN');
    await eventually(() =>
      expect(ephemeralsTo('U0ANN')).toContain('Recorded: &lt;!here&gt;. The question is decided.'),
    );
    await eventually(() => {
      const update = message.updates.at(-1);
      expect(update?.text).toBe(`Decided: &lt;!here&gt; (by Ann Example): ${escaped}`);
    });
    // The blocks keep the words as they are, as plain_text.
    expect(message.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text', text: pause.title } });
  });

  it('an unknown pause or button gets a message only the clicker sees', async () => {
    const { message } = await postedQuestion();
    const unknown = structuredClone(message);
    const actions = unknown.blocks.find((b) => b.type === 'actions')!;
    actions.block_id = 'pausepoint:pause_doesnotexist';
    expect((await slack.click(service.url, unknown, 'approve', 'U0ANN')).status).toBe(200);
    actions.block_id = 'someone-elses-block';
    expect((await slack.click(service.url, unknown, 'approve', 'U0BOB')).status).toBe(200);
    const text = 'This button belongs to no question this service knows; nothing was recorded.';
    await eventually(() => {
      expect(ephemeralsTo('U0ANN')).toContain(text);
      expect(ephemeralsTo('U0BOB')).toContain(text);
    });
  });

  it('honours a 429 and its Retry-After (on the service clock), then posts', async () => {
    let offsetMs = 0;
    const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
    const limited = await startTestService({
      clock,
      env: { ...slack.env('http'), WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(',') },
    });
    try {
      const account = await registerAccount(limited.url);
      slack.rateLimit('chat.postMessage', 30);
      const pause = await createPause(limited.url, account.live, {
        title: `Limited ${Math.random().toString(36).slice(2, 8)}?`,
        notify: { slack: { channel: CHANNEL } },
      });
      const attempts = () => slack.callsOf('chat.postMessage').filter((c) => String(c.args.text).includes(pause.title));
      const notification = async () =>
        (await call(limited.url, 'GET', `/v1/pause/${pause.id}`, { token: account.live })).body.notifications[0];
      // Settled (attempts counts a claim; last_error comes with the 429's answer).
      await eventually(async () =>
        expect(await notification()).toMatchObject({ attempts: 1, last_error: 'ratelimited' }),
      );
      // Past the schedule's first gap (200 ms), short of Retry-After (30 s): not yet.
      offsetMs += 10_000;
      await limited.worker!.runOnce();
      expect(attempts().map((c) => c.status)).toEqual([429]);
      offsetMs += 21_000;
      await limited.worker!.runOnce();
      await eventually(() => expect(attempts().map((c) => c.status)).toEqual([429, 200]));
      expect(slack.messages.filter((m) => m.text.includes(pause.title))).toHaveLength(1);
      await eventually(async () => expect(await notification()).toMatchObject({ status: 'sent', attempts: 2 }));
    } finally {
      await limited.destroy();
    }
  });

  it('two clicks at the same moment on a channel message: one answer, the other told, one event', async () => {
    const { pause, message } = await postedQuestion();
    const before = { ann: ephemeralsTo('U0ANN').length, bob: ephemeralsTo('U0BOB').length };
    const clicks = await Promise.all([
      slack.click(service.url, message, 'approve', 'U0ANN'),
      slack.click(service.url, message, 'reject', 'U0BOB'),
    ]);
    expect(clicks.map((c) => c.status)).toEqual([200, 200]);
    await eventually(() => {
      const told = [...ephemeralsTo('U0ANN').slice(before.ann), ...ephemeralsTo('U0BOB').slice(before.bob)];
      expect(told.filter((t) => t.startsWith('Recorded:'))).toHaveLength(1);
      expect(told.filter((t) => t.startsWith('This pause has already been answered.'))).toHaveLength(1);
    });
    const read = await readPause(pause.id);
    const winner = read.response.responded_by.slack_user_id;
    expect(read.response.choice).toBe(winner === 'U0ANN' ? 'approve' : 'reject');
    const events = (await eventsOf(service, pause.id)).filter((e) => e.type === 'pause.responded');
    expect(events).toHaveLength(1);
  });

  it('a cancel updates the channel message; a pause the Slack app never posted about gets no update', async () => {
    const { pause, message } = await postedQuestion();
    await eventually(async () => expect((await readPause(pause.id)).notifications[0].status).toBe('sent'));
    expect((await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.live })).status).toBe(200);
    await eventually(() => expect(JSON.stringify(message.updates.at(-1)?.blocks ?? null)).toContain('Cancelled'));
    const updates = slack.callsOf('chat.update').length;

    const plain = await createPause(service.url, dev.live, { title: `Plain ${Math.random().toString(36).slice(2)}` });
    expect((await call(service.url, 'DELETE', `/v1/pause/${plain.id}`, { token: dev.live })).status).toBe(200);
    const closed = await readPause(plain.id);
    expect(closed.status).toBe('cancelled');
    expect(closed.notifications).toEqual([]);
    expect(slack.callsOf('chat.update')).toHaveLength(updates);
  });

  it('is suppressed in test mode, with the blocks kept; a live pause needs the Slack app configured', async () => {
    const test = await createPause(service.url, dev.test, {
      title: 'Test mode question',
      notify: { slack: { channel: CHANNEL } },
    });
    expect(test.notifications).toMatchObject([{ channel: 'slack', to: CHANNEL, status: 'suppressed' }]);
    const shown = await call(service.url, 'GET', `/v1/pause/${test.id}/notifications/${test.notifications[0].id}`, {
      token: dev.test,
    });
    expect(shown.status).toBe(200);
    expect(JSON.stringify(shown.body)).toContain('Test mode question');
    // Closing it updates nothing: nothing was posted.
    expect((await call(service.url, 'DELETE', `/v1/pause/${test.id}`, { token: dev.test })).status).toBe(200);
    const closed = await call(service.url, 'GET', `/v1/pause/${test.id}`, { token: dev.test });
    expect(closed.body.notifications).toHaveLength(1);
    const bad = await call(service.url, 'POST', '/v1/pause', {
      token: dev.live,
      body: { title: 'x', notify: { slack: { channel: '#general' } } },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('notify.slack.channel');
  });
});

describe('/slack/interactions limits', () => {
  it('over RESPOND_RATE_LIMIT per address is 429 before the body is read (even a large one), and records nothing', async () => {
    const limited = await startTestService({ env: { ...slack.env('http'), RESPOND_RATE_LIMIT: '2/60' } });
    try {
      const account = await registerAccount(limited.url);
      const pause = await createPause(limited.url, account.live, {
        title: `Limited ${Math.random().toString(36).slice(2, 8)}?`,
        options: ['approve', 'reject'],
        notify: { slack: { channel: CHANNEL } },
      });
      const message = await slack.messageAbout(pause.title);
      const unknown = structuredClone(message);
      unknown.blocks.find((b) => b.type === 'actions')!.block_id = 'someone-elses-block';
      const infoBefore = slack.callsOf('users.info').length;
      expect((await slack.click(limited.url, unknown, 'approve', 'U0ANN')).status).toBe(200);
      expect((await slack.click(limited.url, unknown, 'approve', 'U0ANN')).status).toBe(200);
      const over = await slack.click(limited.url, message, 'approve', 'U0ANN');
      expect(over.status).toBe(429);
      const big = await fetch(`${limited.url}/slack/interactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payload: 'x'.repeat(300 * 1024) }),
      });
      expect(big.status).toBe(429);
      const read = (await call(limited.url, 'GET', `/v1/pause/${pause.id}`, { token: account.live })).body;
      expect(read.status).toBe('pending');
      expect(slack.callsOf('users.info').length).toBe(infoBefore);
    } finally {
      await limited.destroy();
    }
  });

  it('a body over 256 KiB is 413 whichever parser would read it (the route bodyLimit)', async () => {
    for (const type of ['application/json', 'application/x-www-form-urlencoded']) {
      const big = await fetch(`${service.url}/slack/interactions`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: `payload=${'x'.repeat(300 * 1024)}`,
      });
      expect([type, big.status]).toEqual([type, 413]);
    }
  });
});

describe('Slack unreachable', () => {
  it('retries on the schedule, then marks the message failed, in the timeline too', async () => {
    const gone = await startSlackStandin();
    const env = { ...gone.env('http'), WEBHOOK_RETRY_SCHEDULE_MS: '100,100' };
    await gone.close(); // nothing listens at its address any more
    const cut = await startTestService({ env });
    try {
      const account = await registerAccount(cut.url);
      const pause = await createPause(cut.url, account.live, {
        title: 'Nobody hears this',
        notify: { slack: { channel: CHANNEL } },
      });
      await eventually(async () => {
        const read = (await call(cut.url, 'GET', `/v1/pause/${pause.id}`, { token: account.live })).body;
        expect(read.notifications[0]).toMatchObject({ channel: 'slack', status: 'failed', attempts: 3 });
        expect(read.notifications[0].last_error).toBeTruthy();
      });
      const timeline = (await call(cut.url, 'GET', `/v1/pause/${pause.id}/timeline`, { token: account.live })).body;
      expect(timeline.data.map((e: any) => e.type)).toContain('notification_failed');
    } finally {
      await cut.destroy();
    }
  });
});

describe('SLACK_ALLOWED_DEVELOPERS', () => {
  it('only the accounts named may use the Slack app; the others get 400 channel_unavailable, nothing posted', async () => {
    const allowedEmail = `allowed.${Math.random().toString(36).slice(2)}@example.com`;
    const only = await startTestService({
      env: { ...slack.env('http'), SLACK_ALLOWED_DEVELOPERS: `someone@example.com, ${allowedEmail.toUpperCase()}` },
    });
    try {
      const register = async (email: string) =>
        (await call(only.url, 'POST', '/v1/auth/register', { body: { email, password: 'correct horse battery' } })).body
          .keys.live as string;
      const allowed = await register(allowedEmail);
      const other = await registerAccount(only.url);
      const title = `Allowed ${Math.random().toString(36).slice(2, 8)}`;
      const posted = await call(only.url, 'POST', '/v1/pause', {
        token: allowed,
        body: { title, notify: { slack: { channel: CHANNEL } } },
      });
      expect(posted.status).toBe(201);
      await slack.messageAbout(title);
      const refusedTitle = `Refused ${Math.random().toString(36).slice(2, 8)}`;
      for (const body of [
        { title: refusedTitle, notify: { slack: { channel: CHANNEL } } },
        { title: refusedTitle, reviewers: [{ email: 'ann@example.com' }], deliver: ['slack'] },
      ]) {
        const refused = await call(only.url, 'POST', '/v1/pause', { token: other.live, body });
        expect(refused.status).toBe(400);
        expect(refused.body.error.code).toBe('channel_unavailable');
        expect(refused.body.error.message).toContain('SLACK_ALLOWED_DEVELOPERS');
      }
      // Email and the test mode are not the Slack app's: they stay open.
      const test = await call(only.url, 'POST', '/v1/pause', {
        token: other.test,
        body: { title: refusedTitle, notify: { slack: { channel: CHANNEL } } },
      });
      expect(test.status).toBe(201);
      expect(slack.messages.some((m) => m.text.includes(refusedTitle))).toBe(false);
    } finally {
      await only.destroy();
    }
  });
});

describe('without the Slack app', () => {
  it('a live notify.slack is 400 channel_unavailable, and /slack/interactions is 404', async () => {
    const plain = await startTestService();
    try {
      const account = await registerAccount(plain.url);
      const refused = await call(plain.url, 'POST', '/v1/pause', {
        token: account.live,
        body: { title: 'x', notify: { slack: { channel: CHANNEL } } },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('channel_unavailable');
      const interactions = await fetch(`${plain.url}/slack/interactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'payload=%7B%7D',
      });
      expect(interactions.status).toBe(404);
    } finally {
      await plain.destroy();
    }
  });
});
