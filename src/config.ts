// Every setting pausepoint reads, parsed and checked in one place. A bad value
// stops the service with one line naming the variable (ConfigError).
import { isAbsolute, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { isLocalhostName } from './domain/hosts.js';

export type Role = 'all' | 'api' | 'worker';
export type DatabaseConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };
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
  /** Live pauses per calendar month (UTC) by plan name; null means unlimited. */
  planQuotas: Map<string, number | null>;
  /** Gaps between attempts of webhook deliveries and notifications (WEBHOOK_RETRY_SCHEDULE_MS). */
  retryScheduleMs: number[];
  webhookAllowedNetworks: Cidr[];
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
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const port = parseInteger('PORT', read('PORT') ?? '3000', 0, 65535);
  const host = read('HOST') ?? '127.0.0.1';
  const database = parseDatabaseUrl(read('DATABASE_URL') ?? 'sqlite:./data/pausepoint.db');
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
  const smtpTls = parseChoice('SMTP_TLS', read('SMTP_TLS') ?? 'on', ['on', 'off'] as const);
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
    planQuotas: parsePlanQuotas(read('PLAN_QUOTAS') ?? 'free:100,pro:10000,scale:100000'),
    retryScheduleMs: parseRetrySchedule(read('WEBHOOK_RETRY_SCHEDULE_MS') ?? '30000,60000,120000'),
    webhookAllowedNetworks: parseNetworks(read('WEBHOOK_ALLOWED_NETWORKS') ?? ''),
    role: parseChoice('ROLE', read('ROLE') ?? 'all', ['all', 'api', 'worker'] as const),
    logLevel: parseChoice('LOG_LEVEL', read('LOG_LEVEL') ?? 'info', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ] as const),
    trustProxy: parseChoice('TRUST_PROXY', read('TRUST_PROXY') ?? 'false', ['true', 'false'] as const) === 'true',
    authRateLimit: parseRateLimit('AUTH_RATE_LIMIT', read('AUTH_RATE_LIMIT') ?? '10/60'),
    apiRateLimit: parseRateLimit('API_RATE_LIMIT', read('API_RATE_LIMIT') ?? '6000/60'),
    respondRateLimit: parseRateLimit('RESPOND_RATE_LIMIT', read('RESPOND_RATE_LIMIT') ?? '300/60'),
    maxWaitsPerKey: parseInteger('MAX_WAITS_PER_KEY', read('MAX_WAITS_PER_KEY') ?? '100', 0, 1_000_000),
    searchRateLimit: parseRateLimit('SEARCH_RATE_LIMIT', read('SEARCH_RATE_LIMIT') ?? '30/60'),
    searchConcurrency: parseInteger('SEARCH_CONCURRENCY', read('SEARCH_CONCURRENCY') ?? '2', 1, 1000),
    searchTimeoutMs: parseInteger('SEARCH_TIMEOUT_MS', read('SEARCH_TIMEOUT_MS') ?? '500', 1, 600_000),
    headersTimeoutMs: parseInteger('HEADERS_TIMEOUT_MS', read('HEADERS_TIMEOUT_MS') ?? '10000', 100, 600_000),
    requestTimeoutMs: parseInteger('REQUEST_TIMEOUT_MS', read('REQUEST_TIMEOUT_MS') ?? '30000', 100, 600_000),
  };
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

function parseDatabaseUrl(raw: string): DatabaseConfig {
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '')
      throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:./data/pausepoint.db');
    return { kind: 'sqlite', path: path === ':memory:' ? path : isAbsolute(path) ? path : resolve(path) };
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) {
    parseUrl('DATABASE_URL', raw, ['postgres:', 'postgresql:']);
    return { kind: 'postgres', url: raw };
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
