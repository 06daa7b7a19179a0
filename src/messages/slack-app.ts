import {
  type FetchFunction,
  LogLevel,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebClient,
} from '@slack/web-api';
import type { SlackConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { SafeClient } from '../net/safe-client.js';
import { type SlackMessage, slackEscape } from './slack-blocks.js';

// The Slack app's calls to the Web API, through the official client
// (@slack/web-api) over the SSRF-safe connections. The client neither retries
// nor waits out a rate limit itself: a failed call is reported, with Slack's
// Retry-After, and the outbox decides when to try again. Every `text` sent
// here is plain words, never markup: it is escaped (slackEscape) here, once.

/** A call's result: its value, or why it failed (Slack's error code, or the transport's). */
export type SlackResult<T> =
  | { ok: true; value: T }
  | { ok: false; error: string; status: number | null; retryAfterMs?: number };

/** A Slack user as users.info / users.lookupByEmail describe them: who, and the fields that say whether to trust them. */
export interface SlackUser {
  id: string;
  email: string | null;
  name: string;
  /** The workspace the user belongs to (`team_id`). */
  teamId: string | null;
  deleted: boolean;
  isBot: boolean;
  /** A Slack Connect external user (`is_stranger`). */
  isStranger: boolean;
  /** `is_email_confirmed`: false when Slack says the email is not confirmed; null when it says nothing. */
  emailConfirmed: boolean | null;
}

export interface SlackApp {
  readonly client: WebClient;
  postMessage(channel: string, message: SlackMessage): Promise<SlackResult<{ channel: string; ts: string }>>;
  update(channel: string, ts: string, message: SlackMessage): Promise<SlackResult<null>>;
  postEphemeral(channel: string, user: string, text: string): Promise<SlackResult<null>>;
  /** The user with this email, or null when the workspace has none (`users_not_found`). */
  lookupByEmail(email: string): Promise<SlackResult<SlackUser | null>>;
  userInfo(userId: string): Promise<SlackResult<SlackUser>>;
  /** The bot's own workspace (`auth.test`'s team_id), asked once and kept. */
  ownTeam(): Promise<SlackResult<string>>;
  openView(triggerId: string, view: object): Promise<SlackResult<null>>;
}

export function createSlackApp(config: SlackConfig, outbound: SafeClient, timeoutMs: number, logger: Logger): SlackApp {
  const client = new WebClient(config.botToken, {
    slackApiUrl: config.apiUrl,
    fetch: outbound.fetch as unknown as FetchFunction,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: timeoutMs,
    logger: slackLogger(logger, 'Slack Web API'),
    allowAbsoluteUrls: false,
  });
  let team: Promise<SlackResult<string>> | undefined;
  const call = async <T>(work: () => Promise<T>): Promise<SlackResult<T>> => {
    try {
      return { ok: true, value: await work() };
    } catch (error) {
      return failure(error);
    }
  };
  return {
    client,
    postMessage: (channel, message) =>
      call(async () => {
        const answer = await client.chat.postMessage({
          channel,
          text: slackEscape(message.text),
          blocks: message.blocks as never,
        });
        return { channel: answer.channel ?? channel, ts: answer.ts ?? '' };
      }),
    update: (channel, ts, message) =>
      call(async () => {
        await client.chat.update({ channel, ts, text: slackEscape(message.text), blocks: message.blocks as never });
        return null;
      }),
    postEphemeral: (channel, user, text) =>
      call(async () => {
        await client.chat.postEphemeral({ channel, user, text: slackEscape(text) });
        return null;
      }),
    async lookupByEmail(email) {
      const found = await call(async () => {
        const { user } = await client.users.lookupByEmail({ email });
        return user?.id ? slackUserOf(user.id, user) : null;
      });
      return !found.ok && found.error === 'users_not_found' ? { ok: true, value: null } : found;
    },
    userInfo: (userId) => call(async () => slackUserOf(userId, (await client.users.info({ user: userId })).user)),
    ownTeam() {
      // Asked once; a failed answer is not kept, so the next call asks again.
      team ??= call(async () => {
        const { team_id } = await client.auth.test();
        if (!team_id) throw new Error('auth.test named no team');
        return team_id;
      }).then((result) => {
        if (!result.ok) team = undefined;
        return result;
      });
      return team;
    },
    openView: (triggerId, view) =>
      call(async () => {
        await client.views.open({ trigger_id: triggerId, view: view as never });
        return null;
      }),
  };
}

/** The fields of Slack's user object (users.info, users.lookupByEmail) this service reads. */
interface SlackUserObject {
  name?: string;
  real_name?: string;
  team_id?: string;
  deleted?: boolean;
  is_bot?: boolean;
  is_stranger?: boolean;
  is_email_confirmed?: boolean;
  profile?: { email?: string; real_name?: string };
}

function slackUserOf(id: string, user: SlackUserObject | undefined): SlackUser {
  return {
    id,
    email: user?.profile?.email ?? null,
    name: user?.real_name || user?.profile?.real_name || user?.name || id,
    teamId: user?.team_id ?? null,
    deleted: user?.deleted === true,
    isBot: user?.is_bot === true,
    isStranger: user?.is_stranger === true,
    emailConfirmed: typeof user?.is_email_confirmed === 'boolean' ? user.is_email_confirmed : null,
  };
}

/** The Slack clients' own log lines (warnings and errors; they carry no token), in the service's log. */
export function slackLogger(logger: Logger, source: string) {
  const line = (parts: unknown[]) => ({ slack: parts.map(String).join(' ') });
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...parts: unknown[]) => logger.warn(line(parts), source),
    error: (...parts: unknown[]) => logger.warn(line(parts), source),
    setLevel: () => undefined,
    getLevel: () => LogLevel.WARN,
    setName: () => undefined,
  };
}

function failure(error: unknown): { ok: false; error: string; status: number | null; retryAfterMs?: number } {
  if (error instanceof WebAPIRateLimitedError)
    return { ok: false, error: 'ratelimited', status: 429, retryAfterMs: error.retryAfter * 1000 };
  if (error instanceof WebAPIPlatformError) return { ok: false, error: String(error.data.error), status: 200 };
  if (error instanceof WebAPIHTTPError)
    return { ok: false, error: `HTTP ${error.statusCode}`, status: error.statusCode };
  return { ok: false, error: error instanceof Error ? error.message : String(error), status: null };
}
