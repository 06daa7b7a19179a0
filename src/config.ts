// Every setting pausepoint reads, parsed and checked in one place. A bad value
// stops the service with one line naming the variable (ConfigError).
import { isAbsolute, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { normaliseEmail } from './domain/email.js';
import { isLocalhostName } from './domain/hosts.js';
import { readDuration } from './domain/units.js';

export type Role = 'all' | 'api' | 'worker';
export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'postgres';
      url: string;
      /** DATABASE_PREPARED_STATEMENTS. */
      preparedStatements: boolean;
    };
export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface RateLimit {
  max: number;
  windowMs: number;
}

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  /** Where people reach this service; unset means the address it listens on. */
  publicBaseUrl: string | undefined;
  /** Master secret; undefined on SQLite means "generate one into the data folder". */
  secretKey: string | undefined;
  smtpUrl: string | undefined;
  /**
   * SMTP_TLS: `on` (the default) upgrades with STARTTLS whenever the server
   * offers it and checks its certificate; `off` never does, and is accepted
   * only for an SMTP server on loopback.
   */
  smtpTls: 'on' | 'off';
  emailFrom: string | undefined;
  paymentWebhookSecret: string | undefined;
  /** The Slack app (docs/slack.md); undefined when SLACK_BOT_TOKEN is unset. */
  slack: SlackConfig | undefined;
  /** Live pauses per calendar month (UTC) by plan name; null means unlimited. */
  planQuotas: Map<string, number | null>;
  /** Gaps between attempts of webhook deliveries and notifications (WEBHOOK_RETRY_SCHEDULE_MS). */
  retryScheduleMs: number[];
  webhookAllowedNetworks: Cidr[];
  /** A webhook all of whose attempts have failed for this long is disabled (WEBHOOK_DISABLE_AFTER). */
  webhookDisableAfterMs: number;
  /** Delivery attempts older than this are deleted (WEBHOOK_ATTEMPT_RETENTION). */
  webhookAttemptRetentionMs: number;
  role: Role;
  logLevel: string;
  trustProxy: boolean;
  /** Register and login, per client address and per email. */
  authRateLimit: RateLimit;
  /** Every key-authenticated request, per key (and per login session). */
  apiRateLimit: RateLimit;
  /** The public respond endpoints and response page, per client address. */
  respondRateLimit: RateLimit;
  /** Concurrent waits (long-polls of a pause, MCP tool waits) one API key may hold on one instance. */
  maxWaitsPerKey: number;
  /** The console's title searches, per console session. */
  searchRateLimit: RateLimit;
  /** How many title searches one instance runs at once; more are refused. */
  searchConcurrency: number;
  /** How long one title search may run on PostgreSQL (its statement_timeout). */
  searchTimeoutMs: number;
  /** How long a client may take to send its request headers, then its whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Deadline of one outbound attempt (a webhook delivery, a Slack notification). */
  outboundTimeoutMs: number;
  outboxLeaseMs: number;
  queuePollMs: number;
  /** On shutdown, how long in-flight requests may take before the remaining connections are cut. */
  shutdownGraceMs: number;
}

export interface SlackConfig {
  botToken: string;
  /** Socket Mode (SLACK_APP_TOKEN): the service dials out; the default when set. */
  appToken: string | undefined;
  /** HTTP mode (SLACK_SIGNING_SECRET): Slack posts interactions to /slack/interactions. */
  signingSecret: string | undefined;
  /** The Web API's base, ending in `/`. */
  apiUrl: string;
  /** SLACK_ALLOWED_DEVELOPERS: the account emails (normalised) that may use the app; undefined for every account. */
  allowedDevelopers: string[] | undefined;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** One environment variable: its default (none: unset), or how an unset one is shown, and what it does (Markdown). */
export interface Setting {
  default?: string;
  unset?: string;
  /** Read by Node itself, not by loadConfig. */
  readByNode?: boolean;
  doc: string;
}

/**
 * Every environment variable, in the order the reference lists them. loadConfig
 * takes its defaults from here, and docs/configuration.md is generated from it
 * (`npm run generate:config-docs`; a test fails while they differ).
 */
export const SETTINGS = {
  PORT: { default: '3000', doc: 'Port the API listens on.' },
  HOST: {
    default: '127.0.0.1',
    doc: 'Address the API listens on. Use `0.0.0.0` to accept connections from other machines.',
  },
  DATABASE_URL: {
    default: 'sqlite:./data/pausepoint.db',
    doc: '`sqlite:PATH` (embedded, the folder is created) or `postgres://user:pass@host:5432/db`.',
  },
  DATABASE_PREPARED_STATEMENTS: {
    default: 'on',
    doc: 'PostgreSQL only. `on`: the statements the service runs most are prepared once per connection and then only bound to new values, which saves PostgreSQL parsing and planning them on every run (about a third of its CPU a webhook delivery). `off`: every statement is sent unnamed. Set it `off` behind a connection pooler in transaction mode that does not keep prepared statements (PgBouncer before 1.21, or 1.21 and later with `max_prepared_statements = 0`); see [operations](operations.md#several-instances-on-postgresql).',
  },
  PUBLIC_BASE_URL: {
    unset: 'the address it listens on',
    doc: 'Where people reach the service; response links are `PUBLIC_BASE_URL/r/{token}`. Set it in production, e.g. `https://approve.example.com`. When it is https, every answer (pages, API, `/mcp`) carries `Strict-Transport-Security: max-age=31536000` (without `includeSubDomains`: the service may live beside plain-http hosts of its parent domain); on http it does not.',
  },
  SECRET_KEY: {
    unset: 'generated on SQLite',
    doc: 'Master secret, at least 32 characters (`openssl rand -hex 32`). It signs response links and encrypts webhook secrets at rest. On SQLite, when unset, one is generated once into `secret.key` beside the database file (mode 0600, written whole or not at all), with a warning. A `secret.key` shorter than 32 characters (e.g. left empty by a full disk) stops the start with a message naming the file: if nothing depends on it yet (no response links sent, no webhooks registered), delete it and start again; otherwise restore it from a backup; or set `SECRET_KEY`. It is required on PostgreSQL, so that every instance shares it. Changing it invalidates existing response links and stored webhook secrets.',
  },
  SMTP_URL: { doc: '`smtp://user:pass@host:587` or `smtps://…`: the SMTP server for email notifications.' },
  SMTP_TLS: {
    default: 'on',
    doc: "`on`: upgrade with STARTTLS whenever the server offers it, checking its certificate against Node's CAs plus `NODE_EXTRA_CA_CERTS`. `off`: never upgrade (plain text); accepted only for `smtp://` to a server on this machine (`localhost`, `127.0.0.1`, `::1`), e.g. a local relay or a mail catcher in development. See [notifications](notifications.md).",
  },
  EMAIL_FROM: {
    doc: 'Sender of notification emails, e.g. `pausepoint <approvals@example.com>`; required with `SMTP_URL`.',
  },
  SLACK_BOT_TOKEN: {
    doc: "The Slack app's bot token (`xoxb-…`): questions are posted, and answered, in Slack. Needs `SLACK_APP_TOKEN` or `SLACK_SIGNING_SECRET`. See [Slack](slack.md).",
  },
  SLACK_APP_TOKEN: {
    doc: 'An app-level token (`xapp-…`, scope `connections:write`): Socket Mode, the service dials out to Slack, so it needs no public URL. Used whenever set.',
  },
  SLACK_SIGNING_SECRET: {
    doc: "The Slack app's signing secret: HTTP mode, Slack posts interactions to `PUBLIC_BASE_URL/slack/interactions`, checked by their `v0` signature within 5 minutes.",
  },
  SLACK_ALLOWED_DEVELOPERS: {
    doc: 'Comma-separated emails of the accounts that may use the Slack app (`notify.slack`, `deliver: ["slack"]`); unset, every account on this server may. The app is one workspace shared by every account that may use it: it posts to any channel the bot is in and messages any member found by email.',
  },
  SLACK_API_URL: {
    default: 'https://slack.com/api/',
    doc: 'Where the Slack Web API is; `http://` only for a server on this machine (tests, a stand-in).',
  },
  PAYMENT_WEBHOOK_SECRET: { doc: "Secret that signs the payment provider's `Payment-Signature` header." },
  PLAN_QUOTAS: {
    default: 'free:100,pro:10000,scale:100000',
    doc: 'Live pauses per calendar month (UTC) for each plan; `unlimited` for no limit (e.g. `free:unlimited` for a self-hosted install that does not bill). Must define `free`, the plan new accounts start on.',
  },
  WEBHOOK_RETRY_SCHEDULE_MS: {
    default: '30000,60000,120000',
    doc: 'Gaps before each retry of a failed webhook delivery or notification.',
  },
  WEBHOOK_ALLOWED_NETWORKS: {
    default: '',
    doc: 'Comma-separated CIDRs exempted from the public-address rule for webhook URLs, at registration and at connect time, e.g. `10.20.0.0/16` for receivers on your private network. Logged at start when set.',
  },
  WEBHOOK_DISABLE_AFTER: {
    default: '5d',
    doc: 'A webhook whose every delivery attempt has failed for this long is disabled (its owner is emailed in live mode); a receiver answering `410 Gone` disables it at once. Seconds, or a duration with `s`, `m`, `h` or `d` (`5d`, `1h30m`). See [Webhooks](webhooks.md#disabled-webhooks).',
  },
  WEBHOOK_ATTEMPT_RETENTION: {
    default: '30d',
    doc: 'How long each delivery attempt (time, duration, status, the start of the answer, the error) is kept; older ones are deleted by the worker. Seconds, or a duration with `s`, `m`, `h` or `d` (`30d`, `1d12h`); any length works with `WEBHOOK_DISABLE_AFTER`: the failing streak is kept on the webhook, not read from the attempts.',
  },
  ROLE: {
    default: 'all',
    doc: '`all` runs the API and the background worker; `api` only the API; `worker` only the worker (no HTTP).',
  },
  LOG_LEVEL: {
    default: 'info',
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines on stdout.',
  },
  TRUST_PROXY: {
    default: 'false',
    doc: '`true` behind a load balancer, so the client address (for rate limits) is read from `X-Forwarded-For`.',
  },
  AUTH_RATE_LIMIT: {
    default: '10/60',
    doc: 'Register and login attempts allowed per client address, and registrations per email, as `requests/seconds`. Login attempts for one email beyond it are spaced `seconds/requests` apart rather than refused (see [Accounts and keys](concepts.md#accounts-and-keys)).',
  },
  API_RATE_LIMIT: {
    default: '6000/60',
    doc: 'Requests allowed per API key (or login session) on every key-authenticated endpoint. Each message of a JSON-RPC batch to `/mcp` counts as a request.',
  },
  MAX_WAITS_PER_KEY: {
    default: '100',
    doc: 'Waits one API key may hold at once on one instance: long-polls of a pause (`GET /v1/pause/{id}?wait=`) and the waits of the MCP tools `ask_human` and `wait_for_human`. A wait over it answers at once with the pause as it stands. `0` turns waiting off.',
  },
  RESPOND_RATE_LIMIT: {
    default: '300/60',
    doc: 'Requests allowed per client address on `/v1/respond/{token}`, the response page and `/slack/interactions` (each counted apart).',
  },
  SEARCH_RATE_LIMIT: {
    default: '30/60',
    doc: "Title searches allowed per console session, as `requests/seconds` (see the [Console](console.md)'s Search).",
  },
  SEARCH_CONCURRENCY: {
    default: '2',
    doc: 'Title searches one instance runs at once; one more is refused with `429`, so searches never take the whole database pool (PostgreSQL has 10 connections an instance).',
  },
  SEARCH_TIMEOUT_MS: {
    default: '500',
    doc: "PostgreSQL: how long a title search's statements may run (`statement_timeout` for its transaction only); a search cancelled by it answers `503`.",
  },
  HEADERS_TIMEOUT_MS: {
    default: '10000',
    doc: 'A client must send its request headers within this time, or gets `408` and loses the connection (slow-loris).',
  },
  REQUEST_TIMEOUT_MS: {
    default: '30000',
    doc: 'The same for the whole request, body included. A request already received, such as a long-poll (`?wait=`), is not cut by it.',
  },
  OUTBOUND_TIMEOUT_MS: {
    default: '5000',
    doc: 'Deadline of one outbound attempt, a webhook delivery or a Slack notification: look-up, connect, TLS, response headers and body. A receiver that has not answered by then is cut, and the attempt fails and is retried. At most 8000, and less than `OUTBOX_LEASE_MS`, so that an attempt ends within the time for which a worker holds its claim.',
  },
  OUTBOX_LEASE_MS: {
    default: '10000',
    doc: "How long a worker holds the deliveries and notifications it has claimed while it attempts them. A worker that dies holding claims (a crash, `kill -9`) leaves them to be attempted again, by any instance, this long after it claimed them. Greater than `OUTBOUND_TIMEOUT_MS`; keep it above your SMTP server's slowest answer too, or an email cut short by the lease may be sent twice.",
  },
  QUEUE_POLL_MS: {
    default: '1000',
    doc: 'How often an idle worker looks at its webhook and notification queues when nothing woke it. A write that queues work wakes the workers at once (on PostgreSQL those of every instance, by `NOTIFY`), and a retry is looked for when it falls due, so this only bounds how late a missed wake-up is caught.',
  },
  SHUTDOWN_GRACE_MS: {
    default: '5000',
    doc: 'On `SIGTERM`, how long requests in flight may take to finish; then the connections still open (e.g. one that never sent a request) are cut and the process exits.',
  },
  NODE_EXTRA_CA_CERTS: {
    readByNode: true,
    doc: "Node's own: a PEM file of extra CAs trusted for outbound TLS (webhooks to receivers with a private CA).",
  },
} as const satisfies Record<string, Setting>;

/** The settings that have a default. */
type DefaultedSetting = {
  [K in keyof typeof SETTINGS]: (typeof SETTINGS)[K] extends { default: string } ? K : never;
}[keyof typeof SETTINGS];

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const read = (name: keyof typeof SETTINGS): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  /** A setting's value, or its default from SETTINGS. */
  const value = (name: DefaultedSetting): string => read(name) ?? SETTINGS[name].default;

  const port = parseInteger('PORT', value('PORT'), 0, 65535);
  const host = value('HOST');
  const preparedStatements = parseChoice('DATABASE_PREPARED_STATEMENTS', value('DATABASE_PREPARED_STATEMENTS'), [
    'on',
    'off',
  ] as const);
  const database = parseDatabaseUrl(value('DATABASE_URL'), preparedStatements === 'on');
  const secretKey = read('SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32) {
    throw new ConfigError('SECRET_KEY', 'must be at least 32 characters (try: openssl rand -hex 32)');
  }
  if (secretKey === undefined && database.kind === 'postgres') {
    throw new ConfigError(
      'SECRET_KEY',
      'is required with PostgreSQL, so that every instance signs and encrypts alike (try: openssl rand -hex 32)',
    );
  }
  const smtpUrl = read('SMTP_URL');
  const smtpServer = optional(smtpUrl, (raw) => parseUrl('SMTP_URL', raw, ['smtp:', 'smtps:']));
  const smtpTls = parseChoice('SMTP_TLS', value('SMTP_TLS'), ['on', 'off'] as const);
  if (smtpTls === 'off' && smtpServer !== undefined) {
    if (smtpServer.protocol === 'smtps:') {
      throw new ConfigError('SMTP_TLS', 'off cannot apply to smtps:// (TLS from the first byte); use smtp://');
    }
    if (!isLoopback(smtpServer.hostname)) {
      throw new ConfigError(
        'SMTP_TLS',
        `off is only for an SMTP server on this machine (localhost, 127.0.0.1, ::1), not ${smtpServer.hostname}; trust its CA with NODE_EXTRA_CA_CERTS instead`,
      );
    }
  }
  const emailFrom = read('EMAIL_FROM');
  if (smtpUrl !== undefined && emailFrom === undefined) {
    throw new ConfigError('EMAIL_FROM', 'is required when SMTP_URL is set (e.g. "pausepoint <approvals@example.com>")');
  }

  // An attempt must end within its claim's lease, or a second worker may take the claim over mid-attempt.
  const outboundTimeoutMs = parseInteger('OUTBOUND_TIMEOUT_MS', value('OUTBOUND_TIMEOUT_MS'), 100, 8000);
  const outboxLeaseMs = parseInteger('OUTBOX_LEASE_MS', value('OUTBOX_LEASE_MS'), 1000, 600_000);
  if (outboxLeaseMs <= outboundTimeoutMs) {
    throw new ConfigError('OUTBOX_LEASE_MS', `must be greater than OUTBOUND_TIMEOUT_MS (${outboundTimeoutMs})`);
  }

  const slack = parseSlack(read('SLACK_BOT_TOKEN'), read('SLACK_APP_TOKEN'), read('SLACK_SIGNING_SECRET'));
  const slackApiUrl = parseUrl('SLACK_API_URL', value('SLACK_API_URL'), ['https:', 'http:']);
  if (slackApiUrl.protocol === 'http:' && !isLoopback(slackApiUrl.hostname)) {
    throw new ConfigError('SLACK_API_URL', 'http:// is only for a server on this machine (localhost, 127.0.0.1, ::1)');
  }

  return {
    port,
    host,
    database,
    publicBaseUrl: optional(read('PUBLIC_BASE_URL'), parsePublicBaseUrl),
    secretKey,
    smtpUrl,
    smtpTls,
    emailFrom,
    paymentWebhookSecret: read('PAYMENT_WEBHOOK_SECRET'),
    slack: slack && {
      ...slack,
      apiUrl: slackApiUrl.href.endsWith('/') ? slackApiUrl.href : `${slackApiUrl.href}/`,
      allowedDevelopers: optional(read('SLACK_ALLOWED_DEVELOPERS'), parseEmailList),
    },
    planQuotas: parsePlanQuotas(value('PLAN_QUOTAS')),
    retryScheduleMs: parseRetrySchedule(value('WEBHOOK_RETRY_SCHEDULE_MS')),
    webhookAllowedNetworks: parseNetworks(value('WEBHOOK_ALLOWED_NETWORKS')),
    webhookDisableAfterMs: parseDuration('WEBHOOK_DISABLE_AFTER', value('WEBHOOK_DISABLE_AFTER')),
    webhookAttemptRetentionMs: parseDuration('WEBHOOK_ATTEMPT_RETENTION', value('WEBHOOK_ATTEMPT_RETENTION')),
    role: parseChoice('ROLE', value('ROLE'), ['all', 'api', 'worker'] as const),
    logLevel: parseChoice('LOG_LEVEL', value('LOG_LEVEL'), [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ] as const),
    trustProxy: parseChoice('TRUST_PROXY', value('TRUST_PROXY'), ['true', 'false'] as const) === 'true',
    authRateLimit: parseRateLimit('AUTH_RATE_LIMIT', value('AUTH_RATE_LIMIT')),
    apiRateLimit: parseRateLimit('API_RATE_LIMIT', value('API_RATE_LIMIT')),
    respondRateLimit: parseRateLimit('RESPOND_RATE_LIMIT', value('RESPOND_RATE_LIMIT')),
    maxWaitsPerKey: parseInteger('MAX_WAITS_PER_KEY', value('MAX_WAITS_PER_KEY'), 0, 1_000_000),
    searchRateLimit: parseRateLimit('SEARCH_RATE_LIMIT', value('SEARCH_RATE_LIMIT')),
    searchConcurrency: parseInteger('SEARCH_CONCURRENCY', value('SEARCH_CONCURRENCY'), 1, 1000),
    searchTimeoutMs: parseInteger('SEARCH_TIMEOUT_MS', value('SEARCH_TIMEOUT_MS'), 1, 600_000),
    headersTimeoutMs: parseInteger('HEADERS_TIMEOUT_MS', value('HEADERS_TIMEOUT_MS'), 100, 600_000),
    requestTimeoutMs: parseInteger('REQUEST_TIMEOUT_MS', value('REQUEST_TIMEOUT_MS'), 100, 600_000),
    outboundTimeoutMs,
    outboxLeaseMs,
    queuePollMs: parseInteger('QUEUE_POLL_MS', value('QUEUE_POLL_MS'), 100, 3_600_000),
    shutdownGraceMs: parseInteger('SHUTDOWN_GRACE_MS', value('SHUTDOWN_GRACE_MS'), 0, 600_000),
  };
}

function parseSlack(
  botToken: string | undefined,
  appToken: string | undefined,
  signingSecret: string | undefined,
): Omit<SlackConfig, 'apiUrl' | 'allowedDevelopers'> | undefined {
  if (botToken === undefined) {
    if (appToken !== undefined) throw new ConfigError('SLACK_APP_TOKEN', 'needs SLACK_BOT_TOKEN');
    if (signingSecret !== undefined) throw new ConfigError('SLACK_SIGNING_SECRET', 'needs SLACK_BOT_TOKEN');
    return undefined;
  }
  if (!botToken.startsWith('xoxb-')) throw new ConfigError('SLACK_BOT_TOKEN', 'must be a bot token (xoxb-…)');
  if (appToken !== undefined && !appToken.startsWith('xapp-'))
    throw new ConfigError('SLACK_APP_TOKEN', 'must be an app-level token (xapp-…)');
  if (appToken === undefined && signingSecret === undefined)
    throw new ConfigError(
      'SLACK_BOT_TOKEN',
      'needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode) to hear the buttons',
    );
  return { botToken, appToken, signingSecret };
}

function parseEmailList(raw: string): string[] {
  const emails = raw
    .split(',')
    .map(normaliseEmail)
    .filter((email) => email !== '');
  if (emails.some((email) => !/^[^\s@]+@[^\s@]+$/.test(email)))
    throw new ConfigError('SLACK_ALLOWED_DEVELOPERS', 'must be comma-separated email addresses');
  return emails;
}

function parseInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function parseChoice<T extends string>(name: string, raw: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${choices.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function parseUrl(name: string, raw: string, protocols: string[]): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return url;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isLocalhostName(host)) return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

function parseDatabaseUrl(raw: string, preparedStatements: boolean): DatabaseConfig {
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '')
      throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:./data/pausepoint.db');
    return { kind: 'sqlite', path: path === ':memory:' ? path : isAbsolute(path) ? path : resolve(path) };
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) {
    parseUrl('DATABASE_URL', raw, ['postgres:', 'postgresql:']);
    return { kind: 'postgres', url: raw, preparedStatements };
  }
  throw new ConfigError('DATABASE_URL', 'must start with sqlite: or postgres://');
}

function parsePublicBaseUrl(raw: string): string {
  const url = parseUrl('PUBLIC_BASE_URL', raw, ['http:', 'https:']);
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError('PUBLIC_BASE_URL', 'must not carry a query, fragment or user info');
  }
  return url.toString().replace(/\/+$/, '');
}

const optional = <T>(raw: string | undefined, parse: (raw: string) => T): T | undefined =>
  raw === undefined ? undefined : parse(raw);

function parsePlanQuotas(raw: string): Map<string, number | null> {
  const plans = new Map<string, number | null>();
  for (const entry of raw.split(',')) {
    const match = /^\s*([a-z][a-z0-9_-]*)\s*:\s*(\d+|unlimited)\s*$/.exec(entry);
    if (!match) {
      throw new ConfigError('PLAN_QUOTAS', `"${entry}" is not plan:count (e.g. free:100,pro:10000 or free:unlimited)`);
    }
    const [, name, quota] = match as unknown as [string, string, string];
    plans.set(name, quota === 'unlimited' ? null : Number(quota));
  }
  if (!plans.has('free')) throw new ConfigError('PLAN_QUOTAS', 'must define the "free" plan new accounts start on');
  return plans;
}

function parseRetrySchedule(raw: string): number[] {
  const gaps = raw.split(',').map((part) => part.trim());
  if (gaps.length === 0 || gaps.some((gap) => !/^\d+$/.test(gap))) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE_MS', `must be comma-separated milliseconds, got "${raw}"`);
  }
  return gaps.map(Number);
}

/** A duration of at least one second: seconds, or with units (`90`, `15m`, `5d`, `1h30m`). */
function parseDuration(name: string, raw: string): number {
  const seconds = readDuration(raw, 'seconds');
  if (typeof seconds !== 'number' || seconds < 1 || seconds > 10 * 365 * 86_400) {
    throw new ConfigError(
      name,
      `must be seconds, or a number with s, m, h or d (e.g. 5d or 1h30m), from 1 s to 10 years; got "${raw}"`,
    );
  }
  return seconds * 1000;
}

function parseNetworks(raw: string): Cidr[] {
  if (raw === '') return [];
  return raw.split(',').map((part) => {
    try {
      return ipaddr.parseCIDR(part.trim());
    } catch {
      throw new ConfigError('WEBHOOK_ALLOWED_NETWORKS', `"${part.trim()}" is not a CIDR such as 10.20.0.0/16`);
    }
  });
}

function parseRateLimit(name: string, raw: string): RateLimit {
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) {
    throw new ConfigError(name, `must be <requests>/<seconds> such as 10/60, got "${raw}"`);
  }
  return { max: Number(match[1]), windowMs: Number(match[2]) * 1000 };
}
