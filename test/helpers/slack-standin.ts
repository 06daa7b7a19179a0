// A local stand-in for Slack, speaking its documented wire protocol, so the
// service's official Slack clients (@slack/web-api) talk to it as to Slack:
//
//   - Web API: POST /api/<method>, form-encoded (nested values as JSON
//     strings, as @slack/web-api sends them) or JSON, `Authorization: Bearer
//     xoxb-…`; answers `{ok: true, …}` or `{ok: false, error}` with HTTP 200,
//     and `429` with `Retry-After` when a test asks for it. Methods:
//     chat.postMessage, chat.update, chat.postEphemeral, users.lookupByEmail,
//     users.info (user objects with team_id, deleted, is_bot, is_stranger,
//     is_email_confirmed as Slack documents them), auth.test, views.open.
//   - Socket Mode: apps.connections.open (with the app-level token, `xapp-…`)
//     answers a WebSocket URL on this server; on connecting, the client gets
//     `hello`; envelopes (`{envelope_id, type: "interactive", payload, …}`) are
//     sent to one open connection (each in turn), as Slack does, and wait for the client's
//     acknowledgement (`{envelope_id, payload?}`). Connections can be dropped.
//   - HTTP mode interactions: it plays Slack posting a click to the service,
//     `payload=<urlencoded JSON>` signed with `v0` (X-Slack-Signature over
//     `v0:{timestamp}:{body}`, X-Slack-Request-Timestamp), computed here from
//     the documentation, not with the service's code.
//
// Every Web API call is recorded, and the messages it was asked to post are
// kept (with their updates), so a test clicks the buttons the service posted.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { eventually } from './pauses.js';

export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  authorization: string | undefined;
  contentType: string | undefined;
  /** Date.now() when it arrived. */
  at: number;
  /** The HTTP status it was answered with. */
  status: number;
}

export interface SlackUserRecord {
  id: string;
  email: string;
  name: string;
  /** The user's workspace; the stand-in's own (T0STANDIN) unless set. */
  teamId?: string;
  /** A deactivated account (`deleted: true`). */
  deleted?: boolean;
  isBot?: boolean;
  /** A Slack Connect external user (`is_stranger: true`, and their own team_id). */
  isStranger?: boolean;
  /** `is_email_confirmed`; true unless set. */
  emailConfirmed?: boolean;
}

/** The stand-in's workspace: the bot's team (auth.test) and its users' team_id. */
export const STANDIN_TEAM = 'T0STANDIN';

export interface PostedMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: Array<Record<string, any>>;
  /** Every chat.update of it, in order. */
  updates: Array<{ text: string; blocks: Array<Record<string, any>> }>;
}

export interface SlackStandin {
  /** The Web API's base, for SLACK_API_URL: http://localhost:<port>/api/ */
  apiUrl: string;
  botToken: string;
  /** The app-level token Socket Mode connects with. */
  appToken: string;
  /** Socket Mode connections open now. */
  openSockets(): number;
  /** Sends an interaction over one open Socket Mode connection (each in turn) and waits for its acknowledgement. */
  sendEnvelope(
    payload: object,
    timeoutMs?: number,
  ): Promise<{
    envelope_id: string;
    payload?: unknown /** The connection (numbered from 1 as opened) that acknowledged it. */;
    connection: number;
  }>;
  /** Sends Socket Mode's `disconnect` message (reason `refresh_requested`) on every open connection, as Slack does before recycling one. */
  refreshSockets(): void;
  /** Ends every Socket Mode connection abruptly, as a network failure would. */
  dropSockets(): void;
  /** The block_actions payload of a click on the button of `choice`. */
  blockActions(message: PostedMessage, choice: string, userId: string): Record<string, unknown>;
  signingSecret: string;
  calls: SlackCall[];
  messages: PostedMessage[];
  callsOf(method: string): SlackCall[];
  addUser(user: SlackUserRecord): void;
  /** Every call of `method` answers only after `ms` (0: at once again). */
  delay(method: string, ms: number): void;
  /** The next `times` calls of `method` answer 429 with this Retry-After (seconds). */
  rateLimit(method: string, retryAfterSeconds: number, times?: number): void;
  /**
   * Calls of `method` do their work (a post is in the workspace at once) but
   * are answered only once the function returned is called: the moment
   * between Slack's doing and the caller's hearing of it.
   */
  holdAnswers(method: string): () => void;
  /** The message posted to this channel (a user id for a direct message), with the latest blocks. */
  messageTo(channel: string): PostedMessage | undefined;
  /**
   * Clicks the button of `choice` on a posted message as `userId`: posts the
   * signed block_actions interaction to the service, as Slack does.
   */
  click(
    serviceUrl: string,
    message: PostedMessage,
    choice: string,
    userId: string,
    signing?: { secret?: string; timestamp?: number; signature?: string },
  ): Promise<Response>;
  /** The settings that point a service at this stand-in, in HTTP mode or Socket Mode. */
  env(mode: 'http' | 'socket'): Record<string, string>;
  /** The texts of the messages only `user` saw (chat.postEphemeral), oldest first. */
  ephemeralsTo(user: string): string[];
  /** The message whose text names `title`, once the service has posted it. */
  messageAbout(title: string): Promise<PostedMessage>;
  /** The views the service opened (views.open), newest last. */
  openedViews(): Array<Record<string, any>>;
  /**
   * Submits a modal as `userId` with these inputs' states (by block id, the
   * state of its one input as Slack sends it); the service's answer is the
   * acknowledgement's body (`response_action`), or empty.
   */
  submitView(
    serviceUrl: string,
    view: Record<string, any>,
    userId: string,
    states: Record<string, Record<string, unknown>>,
  ): Promise<{ status: number; body: any }>;
  /** Posts any body as Slack would, signed (or with the given signature). */
  postSigned(
    serviceUrl: string,
    body: string,
    signing?: { secret?: string; timestamp?: number; signature?: string },
  ): Promise<Response>;
  close(): Promise<void>;
}

export async function startSlackStandin(
  options: { botToken?: string; signingSecret?: string } = {},
): Promise<SlackStandin> {
  const botToken = options.botToken ?? `xoxb-test-${Math.random().toString(36).slice(2)}`;
  const appToken = `xapp-test-${Math.random().toString(36).slice(2)}`;
  const sockets = new Set<WebSocket>();
  const socketNumbers = new Map<WebSocket, number>();
  let connections = 0;
  let nextSocket = 0;
  const acks = new Map<string, (ack: { envelope_id: string; payload?: unknown }) => void>();
  const signingSecret = options.signingSecret ?? `secret-${Math.random().toString(36).slice(2)}`;
  const calls: SlackCall[] = [];
  const messages: PostedMessage[] = [];
  const users = new Map<string, SlackUserRecord>();
  const limits = new Map<string, { retryAfter: number; times: number }>();
  const delays = new Map<string, number>();
  const holds = new Map<string, Promise<void>>();
  let counter = 0;

  const answer = (method: string, args: Record<string, any>): Record<string, unknown> => {
    switch (method) {
      case 'chat.postMessage': {
        // A user id as the channel is the app's direct message with them.
        const channel = String(args.channel).startsWith('U')
          ? `D${String(args.channel).slice(1)}`
          : String(args.channel);
        const ts = `${Math.floor(Date.now() / 1000)}.${String(++counter).padStart(6, '0')}`;
        const blocks = parseMaybe(args.blocks) ?? [];
        messages.push({ channel, ts, text: String(args.text ?? ''), blocks, updates: [] });
        return { ok: true, channel, ts, message: { text: args.text, blocks } };
      }
      case 'chat.update': {
        const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
        if (!message) return { ok: false, error: 'message_not_found' };
        message.updates.push({ text: String(args.text ?? ''), blocks: parseMaybe(args.blocks) ?? [] });
        return { ok: true, channel: message.channel, ts: message.ts };
      }
      case 'chat.postEphemeral':
        return { ok: true, message_ts: `${Math.floor(Date.now() / 1000)}.${String(++counter).padStart(6, '0')}` };
      case 'users.lookupByEmail': {
        const user = [...users.values()].find((u) => u.email.toLowerCase() === String(args.email).toLowerCase());
        return user ? { ok: true, user: userObject(user) } : { ok: false, error: 'users_not_found' };
      }
      case 'users.info': {
        const user = users.get(String(args.user));
        return user ? { ok: true, user: userObject(user) } : { ok: false, error: 'user_not_found' };
      }
      case 'auth.test':
        return {
          ok: true,
          url: 'https://standin.slack.com/',
          team: 'Stand-in',
          user: 'pausepoint',
          team_id: STANDIN_TEAM,
          user_id: 'U0BOT',
          bot_id: 'B0BOT',
        };
      case 'views.open':
        return { ok: true, view: { id: `V${++counter}`, ...(parseMaybe(args.view) ?? {}) } };
      default:
        return { ok: false, error: 'unknown_method' };
    }
  };

  const server: Server = createServer(async (request, response) => {
    const body = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://localhost');
    const method = url.pathname.replace(/^\/api\//, '');
    const contentType = request.headers['content-type'];
    const args = contentType?.startsWith('application/json')
      ? (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(body.toString('utf8')));
    const authorization = request.headers.authorization;
    const call: SlackCall = { method, args, authorization, contentType, at: Date.now(), status: 200 };
    calls.push(call);
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(json));
    };
    const delayMs = delays.get(method);
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const limit = limits.get(method);
    if (limit && limit.times > 0) {
      limit.times--;
      return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(limit.retryAfter) });
    }
    if (!authorization) return send(200, { ok: false, error: 'not_authed' });
    if (method === 'apps.connections.open') {
      if (authorization !== `Bearer ${appToken}`) return send(200, { ok: false, error: 'invalid_auth' });
      return send(200, { ok: true, url: `ws://localhost:${port}/link/?ticket=${++counter}` });
    }
    if (authorization !== `Bearer ${botToken}`) return send(200, { ok: false, error: 'invalid_auth' });
    const answered = answer(method, args);
    await holds.get(method);
    send(200, answered);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const wss = new WebSocketServer({ server, path: '/link/' });
  wss.on('connection', (socket) => {
    sockets.add(socket);
    socketNumbers.set(socket, ++connections);
    socket.on('close', () => sockets.delete(socket));
    socket.on('message', (data) => {
      const ack = JSON.parse(String(data)) as { envelope_id: string; payload?: unknown };
      acks.get(ack.envelope_id)?.(ack);
      acks.delete(ack.envelope_id);
    });
    socket.send(
      JSON.stringify({
        type: 'hello',
        num_connections: sockets.size,
        debug_info: { host: 'standin', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: 'A0STANDIN' },
      }),
    );
  });

  const blockActions: SlackStandin['blockActions'] = (message, choice, userId) => {
    const actions = message.blocks.find((block) => block.type === 'actions');
    const button = actions?.elements?.find((element: Record<string, any>) => element.value === choice);
    if (!actions || !button) throw new Error(`the message has no button for ${choice}`);
    return {
      type: 'block_actions',
      user: { id: userId, username: userId, team_id: 'T0STANDIN' },
      api_app_id: 'A0STANDIN',
      token: 'verification-token-unused',
      container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
      trigger_id: `${++counter}.trigger`,
      team: { id: 'T0STANDIN', domain: 'standin' },
      channel: { id: message.channel, name: 'standin' },
      message: { ts: message.ts, text: message.text, blocks: message.blocks },
      response_url: `http://localhost:${port}/response/${counter}`,
      actions: [
        {
          type: 'button',
          action_id: button.action_id,
          block_id: actions.block_id,
          text: button.text,
          value: button.value,
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    };
  };

  const postSigned: SlackStandin['postSigned'] = (serviceUrl, body, signing = {}) => {
    const timestamp = signing.timestamp ?? Math.floor(Date.now() / 1000);
    const signature =
      signing.signature ??
      `v0=${createHmac('sha256', signing.secret ?? signingSecret)
        .update(`v0:${timestamp}:${body}`)
        .digest('hex')}`;
    return fetch(`${serviceUrl}/slack/interactions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': signature,
      },
      body,
    });
  };

  return {
    apiUrl: `http://localhost:${port}/api/`,
    botToken,
    signingSecret,
    calls,
    messages,
    callsOf: (method) => calls.filter((call) => call.method === method),
    addUser: (user) => void users.set(user.id, user),
    delay: (method, ms) => void delays.set(method, ms),
    rateLimit: (method, retryAfter, times = 1) => void limits.set(method, { retryAfter, times }),
    holdAnswers: (method) => {
      let release = () => {};
      holds.set(method, new Promise<void>((resolve) => (release = resolve)));
      return () => {
        holds.delete(method);
        release();
      };
    },
    messageTo: (channel) => {
      const direct = channel.startsWith('U') ? `D${channel.slice(1)}` : channel;
      return messages.find((message) => message.channel === direct);
    },
    click(serviceUrl, message, choice, userId, signing) {
      const payload = blockActions(message, choice, userId);
      return postSigned(serviceUrl, `payload=${encodeURIComponent(JSON.stringify(payload))}`, signing);
    },
    blockActions,
    env: (mode) => ({
      SLACK_BOT_TOKEN: botToken,
      ...(mode === 'http' ? { SLACK_SIGNING_SECRET: signingSecret } : { SLACK_APP_TOKEN: appToken }),
      SLACK_API_URL: `http://localhost:${port}/api/`,
      // The stand-in is on this machine: exempt loopback from the public-address rule.
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    }),
    ephemeralsTo: (user) =>
      calls.filter((c) => c.method === 'chat.postEphemeral' && c.args.user === user).map((c) => String(c.args.text)),
    async messageAbout(title) {
      let found: PostedMessage | undefined;
      await eventually(() => {
        // The fallback text is escaped as Slack documents (& < >).
        const escaped = title.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
        found = messages.find((m) => m.text.includes(escaped));
        if (!found) throw new Error(`no message about ${title} was posted`);
      });
      return found as PostedMessage;
    },
    openedViews: () => calls.filter((c) => c.method === 'views.open').map((c) => parseMaybe(c.args.view)),
    async submitView(serviceUrl, view, userId, states) {
      const values: Record<string, Record<string, unknown>> = {};
      for (const block of view.blocks as Array<Record<string, any>>) {
        if (block.type !== 'input') continue;
        const state = states[block.block_id] ?? { value: null };
        values[block.block_id] = { [block.element.action_id]: { type: block.element.type, ...state } };
      }
      const payload = {
        type: 'view_submission',
        team: { id: 'T0STANDIN', domain: 'standin' },
        user: { id: userId, username: userId, team_id: 'T0STANDIN' },
        api_app_id: 'A0STANDIN',
        trigger_id: `${++counter}.trigger`,
        view: { id: `V${counter}`, team_id: 'T0STANDIN', ...view, state: { values }, hash: `${counter}.hash` },
      };
      const response = await postSigned(serviceUrl, `payload=${encodeURIComponent(JSON.stringify(payload))}`);
      const text = await response.text();
      return { status: response.status, body: text === '' ? null : JSON.parse(text) };
    },
    appToken,
    openSockets: () => [...sockets].filter((socket) => socket.readyState === socket.OPEN).length,
    sendEnvelope(payload, timeoutMs = 5000) {
      // Round-robin over the open connections, as Slack spreads envelopes over an app's connections.
      const open = [...sockets].filter((candidate) => candidate.readyState === candidate.OPEN);
      const socket = open[nextSocket++ % Math.max(open.length, 1)];
      if (!socket) return Promise.reject(new Error('no Socket Mode connection is open'));
      const connection = socketNumbers.get(socket) ?? 0;
      const envelopeId = `env-${++counter}`;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          acks.delete(envelopeId);
          reject(new Error(`envelope ${envelopeId} was not acknowledged within ${timeoutMs} ms`));
        }, timeoutMs);
        acks.set(envelopeId, (ack) => {
          clearTimeout(timer);
          resolve({ ...ack, connection });
        });
        socket.send(
          JSON.stringify({
            envelope_id: envelopeId,
            type: 'interactive',
            accepts_response_payload: true,
            payload,
            retry_attempt: 0,
            retry_reason: '',
          }),
        );
      });
    },
    refreshSockets: () => {
      for (const socket of sockets)
        if (socket.readyState === socket.OPEN)
          socket.send(
            JSON.stringify({
              type: 'disconnect',
              reason: 'refresh_requested',
              debug_info: { host: 'standin' },
            }),
          );
    },
    dropSockets: () => {
      for (const socket of sockets) socket.terminate();
    },
    postSigned,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A user object as Slack documents it (users.info, users.lookupByEmail). */
function userObject(user: SlackUserRecord) {
  return {
    id: user.id,
    team_id: user.teamId ?? STANDIN_TEAM,
    name: user.name.toLowerCase().replace(/\s+/g, '.'),
    deleted: user.deleted === true,
    real_name: user.name,
    tz: 'Europe/London',
    profile: { email: user.email, real_name: user.name, display_name: user.name, team: user.teamId ?? STANDIN_TEAM },
    is_admin: false,
    is_owner: false,
    is_bot: user.isBot === true,
    is_app_user: false,
    is_restricted: false,
    is_ultra_restricted: false,
    ...(user.isStranger ? { is_stranger: true } : {}),
    is_email_confirmed: user.emailConfirmed ?? true,
    updated: 1764240000,
  };
}

function parseMaybe(value: unknown): any {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}
