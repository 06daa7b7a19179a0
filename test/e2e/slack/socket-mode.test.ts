import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/database.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { type PostedMessage, type SlackStandin, startSlackStandin } from '../../helpers/slack-standin.js';

// Socket Mode (SLACK_APP_TOKEN): the service dials out to the stand-in's
// WebSocket (apps.connections.open, `hello`), acknowledges each envelope, and
// answers the click as HTTP mode does; it reconnects after a dropped socket
// and after a restart; with two instances each envelope goes to one of them.

const CHANNEL = 'C0SOCKET01';
let slack: SlackStandin;

const slackEnv = () => ({ ...slack.env('socket'), WEBHOOK_RETRY_SCHEDULE_MS: '200,400,600' });

beforeAll(async () => {
  slack = await startSlackStandin();
  slack.addUser({ id: 'U0ANN', email: 'ann@example.com', name: 'Ann Example' });
  slack.addUser({ id: 'U0BOB', email: 'bob@example.com', name: 'Bob Example' });
});
afterAll(async () => {
  await slack?.close();
});

async function posted(service: TestService, key: string, body: Record<string, unknown>): Promise<[any, PostedMessage]> {
  const title = `Socket ${Math.random().toString(36).slice(2, 8)}`;
  const pause = await createPause(service.url, key, { title, options: ['approve', 'reject'], ...body });
  return [pause, await slack.messageAbout(title)];
}

const readPause = async (service: TestService, key: string, id: string) =>
  (await call(service.url, 'GET', `/v1/pause/${id}`, { token: key })).body;
const ephemeralsTo = (user: string) => slack.ephemeralsTo(user);

describe('one instance', () => {
  let service: TestService;
  let dev: Account;
  const database = freshDatabase();
  const secret = randomBytes(32).toString('hex');

  beforeAll(async () => {
    service = await startTestService({ database: await database, env: { ...slackEnv(), SECRET_KEY: secret } });
    dev = await registerAccount(service.url);
    await eventually(() => expect(slack.openSockets()).toBe(1));
  });
  afterAll(async () => {
    await service?.destroy();
    await (await database).drop();
  });

  it('acknowledges a click envelope and answers it, the Slack user recorded; HTTP mode is off', async () => {
    const [pause, message] = await posted(service, dev.live, { notify: { slack: { channel: CHANNEL } } });
    const ack = await slack.sendEnvelope(slack.blockActions(message, 'approve', 'U0ANN'));
    expect(ack.envelope_id).toMatch(/^env-/);
    await eventually(async () => {
      const read = await readPause(service, dev.live, pause.id);
      expect(read.response?.responded_by).toEqual({
        slack_user_id: 'U0ANN',
        email: 'ann@example.com',
        name: 'Ann Example',
      });
    });
    const http = await slack.click(service.url, message, 'reject', 'U0BOB');
    expect(http.status).toBe(404);
  });

  it('reconnects after the socket is dropped, and answers over the new one', async () => {
    const opened = slack.callsOf('apps.connections.open').length;
    slack.dropSockets();
    await eventually(() => expect(slack.openSockets()).toBe(0));
    await eventually(() => expect(slack.openSockets()).toBe(1), 15_000);
    expect(slack.callsOf('apps.connections.open').length).toBeGreaterThan(opened);
    expect(slack.callsOf('apps.connections.open').at(-1)!.authorization).toBe(`Bearer ${slack.appToken}`);
    const [pause, message] = await posted(service, dev.live, { notify: { slack: { channel: CHANNEL } } });
    await slack.sendEnvelope(slack.blockActions(message, 'reject', 'U0BOB'));
    await eventually(async () =>
      expect((await readPause(service, dev.live, pause.id)).response?.choice).toBe('reject'),
    );
  }, 30_000);

  it('reconnects when Slack sends `disconnect` (refresh_requested), and answers over the new connection', async () => {
    const opened = slack.callsOf('apps.connections.open').length;
    slack.refreshSockets();
    await eventually(() => expect(slack.callsOf('apps.connections.open').length).toBeGreaterThan(opened), 15_000);
    await eventually(() => expect(slack.openSockets()).toBe(1), 15_000);
    const [pause, message] = await posted(service, dev.live, { notify: { slack: { channel: CHANNEL } } });
    await slack.sendEnvelope(slack.blockActions(message, 'approve', 'U0ANN'));
    await eventually(async () =>
      expect((await readPause(service, dev.live, pause.id)).response?.choice).toBe('approve'),
    );
  }, 30_000);

  it('reconnects after a restart, and a question asked before it is still answered', async () => {
    const [pause, message] = await posted(service, dev.live, { notify: { slack: { channel: CHANNEL } } });
    await service.stop();
    await eventually(() => expect(slack.openSockets()).toBe(0));
    service = await startTestService({ database: await database, env: { ...slackEnv(), SECRET_KEY: secret } });
    await eventually(() => expect(slack.openSockets()).toBe(1));
    await slack.sendEnvelope(slack.blockActions(message, 'approve', 'U0ANN'));
    await eventually(async () => expect((await readPause(service, dev.live, pause.id)).status).toBe('responded'));
  });
});

describe('an app-level token Slack refuses', () => {
  it('stops with one error in the log, instead of a warning every 2 s', async () => {
    const refused = await startTestService({ env: { ...slackEnv(), SLACK_APP_TOKEN: 'xapp-not-the-token' } });
    try {
      const refusal = 'Slack Socket Mode cannot connect: Slack refuses the app-level token';
      await eventually(() => expect(refused.logs.some((line) => line.includes(refusal))).toBe(true));
      const asked = () =>
        slack.callsOf('apps.connections.open').filter((c) => c.authorization === 'Bearer xapp-not-the-token');
      const before = asked().length;
      await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than the 2 s between tries
      expect(asked().length).toBe(before);
      expect(refused.logs.filter((line) => line.includes(refusal))).toHaveLength(1);
      expect(refused.logs.filter((line) => line.includes('could not connect; trying again'))).toHaveLength(0);
    } finally {
      await refused.destroy();
    }
  });
});

describe('two instances', () => {
  it('each envelope is handled by the one instance it reaches; a repeated envelope records nothing more', async () => {
    const database = await freshDatabase();
    const env = { ...slackEnv(), SECRET_KEY: randomBytes(32).toString('hex') };
    const firstInstance = await startTestService({ database, env });
    const secondInstance = await startTestService({ database, env });
    try {
      await eventually(() => expect(slack.openSockets()).toBe(2));
      const dev = await registerAccount(firstInstance.url);
      const [pause, message] = await posted(firstInstance, dev.live, {
        reviewers: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }],
        quorum: 2,
        deliver: ['slack'],
      });
      const before = slack.callsOf('users.info').length;
      const click = slack.blockActions(message, 'approve', 'U0ANN');
      const first = await slack.sendEnvelope(click);
      await eventually(() =>
        expect(ephemeralsTo('U0ANN')).toContain('Your vote (approve) is counted; the question waits for more votes.'),
      );
      // One instance handled it: one look-up of the clicker, not two.
      expect(slack.callsOf('users.info').length - before).toBe(1);
      // Slack delivering the same envelope again (an acknowledgement lost), to the other
      // instance (the stand-in takes the connections in turn): the vote's rule refuses it.
      const second = await slack.sendEnvelope(click);
      expect(new Set([first.connection, second.connection]).size).toBe(2);
      await eventually(() =>
        expect(ephemeralsTo('U0ANN')).toContain('You have already voted on this question. Nothing was recorded.'),
      );
      expect(slack.callsOf('users.info').length - before).toBe(2); // each instance looked the clicker up once
      const read = await readPause(secondInstance, dev.live, pause.id);
      expect(read.status).toBe('pending');
      expect(read.reviewers.filter((r: any) => r.vote !== null)).toHaveLength(1);
    } finally {
      await firstInstance.stop();
      await secondInstance.stop();
      await database.drop();
    }
  });
});
