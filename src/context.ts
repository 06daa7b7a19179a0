import type { Config } from './config.js';
import type { Clock } from './domain/clock.js';
import type { Slots } from './domain/slots.js';
import type { Logger } from './logger.js';
import type { Mailer } from './messages/mailer.js';
import type { SlackApp } from './messages/slack-app.js';
import type { Metrics } from './metrics.js';
import type { SafeClient } from './net/safe-client.js';
import type { ServiceKeys } from './secrets.js';
import type { PauseWaiters, WakeUpListener } from './signals.js';
import type { Store } from './store/store.js';

/**
 * The shared resources of one running service, built once by startService()
 * and handed to the HTTP layer (as `app.services`) and to the worker loops.
 */
export interface ServiceContext {
  config: Config;
  store: Store;
  clock: Clock;
  keys: ServiceKeys;
  logger: Logger;
  /** The long-polls waiting here on a pause or on any change, and the cap on waits per key. */
  waiters: PauseWaiters;
  /** Other instances' wake-ups (PostgreSQL LISTEN), and whether key rotations elsewhere are heard. */
  wakeUpListener: WakeUpListener;
  /** Email through SMTP; undefined when SMTP_URL and EMAIL_FROM are not set. */
  mailer: Mailer | undefined;
  /** The Slack app's Web API calls; undefined when SLACK_BOT_TOKEN is not set. */
  slack: SlackApp | undefined;
  /** The one SSRF-safe client for every outbound request. */
  outbound: SafeClient;
  metrics: Metrics;
  /** The title searches this instance runs at once (SEARCH_CONCURRENCY). */
  searchSlots: Slots;
  /** PUBLIC_BASE_URL, or the address the API listens on once it does. */
  publicBaseUrl: string;
}
