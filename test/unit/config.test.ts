import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const SECRET = 'x'.repeat(32);

/** The ConfigError thrown by loadConfig(env), or a failure if none is. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

describe('loadConfig defaults', () => {
  it('gives a working SQLite setup with nothing set', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.database).toEqual({ kind: 'sqlite', path: resolve('./data/pausepoint.db') });
    // Unset: the service uses the address it actually listens on.
    expect(config.publicBaseUrl).toBeUndefined();
    expect(config.secretKey).toBeUndefined();
    expect(config.smtpUrl).toBeUndefined();
    expect(config.emailFrom).toBeUndefined();
    expect(config.paymentWebhookSecret).toBeUndefined();
    expect([...config.planQuotas]).toEqual([
      ['free', 100],
      ['pro', 10000],
      ['scale', 100000],
    ]);
    expect(config.retryScheduleMs).toEqual([30000, 60000, 120000]);
    expect(config.webhookAllowedNetworks).toEqual([]);
    expect(config.role).toBe('all');
    expect(config.logLevel).toBe('info');
    expect(config.trustProxy).toBe(false);
    expect(config.authRateLimit).toEqual({ max: 10, windowMs: 60_000 });
    expect(config.maxWaitsPerKey).toBe(100);
    // A receiver gets 5 s to answer, and requests in flight 5 s to finish at shutdown.
    expect(config.outboundTimeoutMs).toBe(5000);
    // A dead worker's claims are attempted again 10 s after they were claimed.
    expect(config.outboxLeaseMs).toBe(10_000);
    expect(config.queuePollMs).toBe(1000);
    expect(config.shutdownGraceMs).toBe(5000);
  });

  it('treats empty and blank variables as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '  ', PLAN_QUOTAS: '', WEBHOOK_RETRY_SCHEDULE_MS: ' ', ROLE: '' });
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.planQuotas.get('free')).toBe(100);
    expect(config.retryScheduleMs).toEqual([30000, 60000, 120000]);
    expect(config.role).toBe('all');
  });

  it('reads every variable it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      PUBLIC_BASE_URL: 'https://pausepoint.example.com/',
      DATABASE_URL: 'postgres://u:p@db.example:5432/pp',
      SECRET_KEY: SECRET,
      SMTP_URL: 'smtps://user:pass@mail.example:465',
      EMAIL_FROM: 'pausepoint@example.com',
      PAYMENT_WEBHOOK_SECRET: 'whsec_abc',
      PLAN_QUOTAS: 'free:5, pro:50',
      WEBHOOK_RETRY_SCHEDULE_MS: '10, 20,30',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8, 10.20.0.0/16,fd00::/8',
      ROLE: 'worker',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: 'true',
      AUTH_RATE_LIMIT: '3/30',
      MAX_WAITS_PER_KEY: '20',
    });
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
    expect(config.publicBaseUrl).toBe('https://pausepoint.example.com');
    expect(config.database).toEqual({
      kind: 'postgres',
      url: 'postgres://u:p@db.example:5432/pp',
      preparedStatements: true,
    });
    expect(config.secretKey).toBe(SECRET);
    expect(config.smtpUrl).toBe('smtps://user:pass@mail.example:465');
    expect(config.emailFrom).toBe('pausepoint@example.com');
    expect(config.paymentWebhookSecret).toBe('whsec_abc');
    expect([...config.planQuotas]).toEqual([
      ['free', 5],
      ['pro', 50],
    ]);
    expect(config.retryScheduleMs).toEqual([10, 20, 30]);
    expect(config.webhookAllowedNetworks.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual([
      '127.0.0.0/8',
      '10.20.0.0/16',
      'fd00::/8',
    ]);
    expect(config.role).toBe('worker');
    expect(config.logLevel).toBe('debug');
    expect(config.trustProxy).toBe(true);
    expect(config.authRateLimit).toEqual({ max: 3, windowMs: 30_000 });
    expect(config.maxWaitsPerKey).toBe(20);
  });

  it('reads the webhook durations as seconds or with s, m, h and d as the CLI does, 5 and 30 days by default', () => {
    expect(loadConfig({}).webhookDisableAfterMs).toBe(5 * 86_400_000);
    expect(loadConfig({}).webhookAttemptRetentionMs).toBe(30 * 86_400_000);
    for (const [raw, ms] of [
      ['90', 90_000],
      ['90s', 90_000],
      ['15m', 900_000],
      ['6h', 21_600_000],
      ['2d', 172_800_000],
      ['1h30m', 5_400_000],
    ] as const) {
      expect(loadConfig({ WEBHOOK_DISABLE_AFTER: raw }).webhookDisableAfterMs).toBe(ms);
      expect(loadConfig({ WEBHOOK_ATTEMPT_RETENTION: raw }).webhookAttemptRetentionMs).toBe(ms);
    }
  });

  it('gives null (unlimited) for free:unlimited', () => {
    const config = loadConfig({ PLAN_QUOTAS: 'free:unlimited,pro:10' });
    expect(config.planQuotas.get('free')).toBeNull();
    expect(config.planQuotas.has('free')).toBe(true);
    expect(config.planQuotas.get('pro')).toBe(10);
  });

  it('reads SQLite paths: relative, absolute, sqlite:/// and :memory:', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:db/x.db' }).database).toEqual({
      kind: 'sqlite',
      path: resolve('db/x.db'),
    });
    expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/pp.db' }).database).toEqual({
      kind: 'sqlite',
      path: '/var/lib/pp.db',
    });
    expect(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/pp.db' }).database).toEqual({
      kind: 'sqlite',
      path: '/var/lib/pp.db',
    });
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({ kind: 'sqlite', path: ':memory:' });
  });

  it('accepts postgresql:// as well as postgres://', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db', SECRET_KEY: SECRET }).database.kind).toBe('postgres');
  });

  it('normalises the public base URL', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pp.example.com/' }).publicBaseUrl).toBe('https://pp.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pp.example.com/base//' }).publicBaseUrl).toBe(
      'https://pp.example.com/base',
    );
  });
});

describe('loadConfig rejects bad values with a message that starts with the variable', () => {
  const cases: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '-1' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '80.5' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:' }],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://[bad', SECRET_KEY: SECRET }],
    ['SECRET_KEY', { SECRET_KEY: 'short' }],
    ['SECRET_KEY', { SECRET_KEY: 'x'.repeat(31) }],
    ['SMTP_URL', { SMTP_URL: 'http://mail.example' }],
    ['SMTP_URL', { SMTP_URL: 'not a url' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://pp.example' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'https://pp.example/?a=1' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'https://user:pw@pp.example' }],
    ['PLAN_QUOTAS', { PLAN_QUOTAS: 'bad' }],
    ['PLAN_QUOTAS', { PLAN_QUOTAS: 'free:-1' }],
    ['PLAN_QUOTAS', { PLAN_QUOTAS: 'free:100,' }],
    ['PLAN_QUOTAS', { PLAN_QUOTAS: 'pro:100,scale:1000' }],
    ['WEBHOOK_RETRY_SCHEDULE_MS', { WEBHOOK_RETRY_SCHEDULE_MS: 'a,b' }],
    ['WEBHOOK_RETRY_SCHEDULE_MS', { WEBHOOK_RETRY_SCHEDULE_MS: '1000,,2000' }],
    ['WEBHOOK_RETRY_SCHEDULE_MS', { WEBHOOK_RETRY_SCHEDULE_MS: '-5' }],
    ['WEBHOOK_DISABLE_AFTER', { WEBHOOK_DISABLE_AFTER: '5 days' }],
    ['WEBHOOK_DISABLE_AFTER', { WEBHOOK_DISABLE_AFTER: '0' }],
    ['WEBHOOK_DISABLE_AFTER', { WEBHOOK_DISABLE_AFTER: '1w' }],
    ['WEBHOOK_DISABLE_AFTER', { WEBHOOK_DISABLE_AFTER: '-1d' }],
    ['WEBHOOK_ATTEMPT_RETENTION', { WEBHOOK_ATTEMPT_RETENTION: '99999d' }],
    ['WEBHOOK_ALLOWED_NETWORKS', { WEBHOOK_ALLOWED_NETWORKS: 'notacidr' }],
    ['WEBHOOK_ALLOWED_NETWORKS', { WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,10.0.0.1' }],
    ['ROLE', { ROLE: 'x' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'yes' }],
    ['AUTH_RATE_LIMIT', { AUTH_RATE_LIMIT: 'x' }],
    ['AUTH_RATE_LIMIT', { AUTH_RATE_LIMIT: '0/60' }],
    ['AUTH_RATE_LIMIT', { AUTH_RATE_LIMIT: '10/0' }],
    ['AUTH_RATE_LIMIT', { AUTH_RATE_LIMIT: '10' }],
    ['MAX_WAITS_PER_KEY', { MAX_WAITS_PER_KEY: 'many' }],
    ['MAX_WAITS_PER_KEY', { MAX_WAITS_PER_KEY: '-1' }],
    ['OUTBOX_LEASE_MS', { OUTBOX_LEASE_MS: '999' }],
    // An attempt must end within its claim: a lease no longer than the outbound deadline is refused.
    ['OUTBOX_LEASE_MS', { OUTBOX_LEASE_MS: '5000' }],
    ['OUTBOX_LEASE_MS', { OUTBOX_LEASE_MS: '2000', OUTBOUND_TIMEOUT_MS: '2000' }],
  ];

  it.each(cases)('%s in %j', (variable, env) => {
    const error = configError(env);
    expect(error.name).toBe('ConfigError');
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.message.length).toBeGreaterThan(variable.length + 5);
  });

  it('requires SECRET_KEY with PostgreSQL', () => {
    const error = configError({ DATABASE_URL: 'postgres://db.example/pp' });
    expect(error.message).toMatch(/^SECRET_KEY: /);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db.example/pp', SECRET_KEY: SECRET })).not.toThrow();
  });

  it('takes a shorter lease with a shorter outbound deadline', () => {
    const config = loadConfig({ OUTBOX_LEASE_MS: '2000', OUTBOUND_TIMEOUT_MS: '1500' });
    expect([config.outboxLeaseMs, config.outboundTimeoutMs]).toEqual([2000, 1500]);
  });

  it('does not require SECRET_KEY with SQLite', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:./x.db' }).secretKey).toBeUndefined();
  });

  it('names the bad entry of a list', () => {
    expect(configError({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, bogus/99' }).message).toContain('bogus/99');
    expect(configError({ PLAN_QUOTAS: 'free:100,pro=5' }).message).toContain('pro=5');
  });
});

describe('DATABASE_PREPARED_STATEMENTS', () => {
  const postgres = { DATABASE_URL: 'postgres://u@db.example:5432/pp', SECRET_KEY: SECRET };

  it('prepares statements on PostgreSQL unless turned off', () => {
    expect(loadConfig(postgres).database).toMatchObject({ kind: 'postgres', preparedStatements: true });
    expect(loadConfig({ ...postgres, DATABASE_PREPARED_STATEMENTS: 'off' }).database).toMatchObject({
      preparedStatements: false,
    });
  });

  it('takes only on or off, and means nothing to SQLite', () => {
    expect(configError({ ...postgres, DATABASE_PREPARED_STATEMENTS: 'no' }).message).toMatch(
      /^DATABASE_PREPARED_STATEMENTS: /,
    );
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' }).database).not.toHaveProperty('preparedStatements');
  });
});

describe('SMTP_TLS', () => {
  const smtp = { SMTP_URL: 'smtp://user:pw@127.0.0.1:2525', EMAIL_FROM: 'a@example.com' };

  it('is on unless turned off', () => {
    expect(loadConfig(smtp).smtpTls).toBe('on');
    expect(loadConfig({ ...smtp, SMTP_TLS: 'off' }).smtpTls).toBe('off');
    expect(loadConfig({ ...smtp, SMTP_URL: 'smtp://localhost:25', SMTP_TLS: 'off' }).smtpTls).toBe('off');
    expect(loadConfig({ ...smtp, SMTP_URL: 'smtp://[::1]:25', SMTP_TLS: 'off' }).smtpTls).toBe('off');
    // *.localhost is this machine too, as the webhook rules say.
    expect(loadConfig({ ...smtp, SMTP_URL: 'smtp://mail.localhost:25', SMTP_TLS: 'off' }).smtpTls).toBe('off');
  });

  it('may be off only for a server on loopback, over smtp://', () => {
    const remote = configError({ ...smtp, SMTP_URL: 'smtp://user:pw@mail.example.com:587', SMTP_TLS: 'off' });
    expect(remote.message).toMatch(/^SMTP_TLS: off is only for an SMTP server on this machine/);
    expect(remote.message).toContain('NODE_EXTRA_CA_CERTS');
    expect(remote.message).not.toContain('pw');
    expect(configError({ ...smtp, SMTP_URL: 'smtp://10.0.0.5:25', SMTP_TLS: 'off' }).message).toMatch(/^SMTP_TLS/);
    expect(configError({ ...smtp, SMTP_URL: 'smtps://127.0.0.1:465', SMTP_TLS: 'off' }).message).toMatch(
      /^SMTP_TLS: off cannot apply to smtps/,
    );
    expect(configError({ ...smtp, SMTP_TLS: 'no' }).message).toMatch(/^SMTP_TLS: must be one of on, off/);
  });
});

describe('Slack settings', () => {
  it('are off without SLACK_BOT_TOKEN, and the token needs a way to hear the buttons', () => {
    expect(loadConfig({}).slack).toBeUndefined();
    expect(configError({ SLACK_BOT_TOKEN: 'xoxb-1' }).message).toMatch(/^SLACK_BOT_TOKEN: needs SLACK_APP_TOKEN/);
    expect(configError({ SLACK_APP_TOKEN: 'xapp-1' }).message).toBe('SLACK_APP_TOKEN: needs SLACK_BOT_TOKEN');
    expect(configError({ SLACK_SIGNING_SECRET: 's' }).message).toBe('SLACK_SIGNING_SECRET: needs SLACK_BOT_TOKEN');
  });

  it('checks the kinds of token and the API address', () => {
    expect(configError({ SLACK_BOT_TOKEN: 'xoxp-1', SLACK_SIGNING_SECRET: 's' }).message).toMatch(/xoxb-/);
    expect(configError({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xoxb-2' }).message).toMatch(/xapp-/);
    const http = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', SLACK_API_URL: 'http://slack.example/api' };
    expect(configError(http).message).toMatch(/^SLACK_API_URL: http:\/\/ is only for a server on this machine/);
  });

  it('takes Socket Mode, HTTP mode or both, with the API address ending in a slash', () => {
    const slack = loadConfig({
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_APP_TOKEN: 'xapp-1',
      SLACK_SIGNING_SECRET: 's',
      SLACK_API_URL: 'http://localhost:9/api',
    }).slack;
    expect(slack).toEqual({
      botToken: 'xoxb-1',
      appToken: 'xapp-1',
      signingSecret: 's',
      apiUrl: 'http://localhost:9/api/',
    });
    expect(loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }).slack?.apiUrl).toBe(
      'https://slack.com/api/',
    );
  });
});
