import type { Migration } from 'kysely';
import * as accounts from './0001_accounts.js';
import * as pauses from './0002_pauses.js';
import * as webhooks from './0003_webhooks.js';
import * as billing from './0004_billing.js';
import * as notifications from './0005_notifications.js';
import * as billingTimes from './0006_billing_times.js';
import * as fairClaims from './0007_fair_claims.js';
import * as reviewers from './0008_reviewers.js';
import * as consoleSessions from './0009_console_sessions.js';
import * as eventIndexes from './0010_event_indexes.js';
import * as inbox from './0011_inbox.js';
import * as pauseSearch from './0012_pause_search.js';
import * as deliveryEvents from './0013_delivery_events.js';
import * as searchPrefixes from './0014_search_prefixes.js';
import * as forms from './0015_forms.js';
import * as webhookOperations from './0016_webhook_operations.js';
import * as slack from './0017_slack.js';
import * as failingSince from './0018_failing_since.js';
import * as slackUsers from './0019_slack_users.js';

// Ordered by name; the same files run on SQLite and PostgreSQL.
export const migrations: Record<string, Migration> = {
  '0001_accounts': accounts,
  '0002_pauses': pauses,
  '0003_webhooks': webhooks,
  '0004_billing': billing,
  '0005_notifications': notifications,
  '0006_billing_times': billingTimes,
  '0007_fair_claims': fairClaims,
  '0008_reviewers': reviewers,
  '0009_console_sessions': consoleSessions,
  '0010_event_indexes': eventIndexes,
  '0011_inbox': inbox,
  '0012_pause_search': pauseSearch,
  '0013_delivery_events': deliveryEvents,
  '0014_search_prefixes': searchPrefixes,
  '0015_forms': forms,
  '0016_webhook_operations': webhookOperations,
  '0017_slack': slack,
  '0018_failing_since': failingSince,
  '0019_slack_users': slackUsers,
};
