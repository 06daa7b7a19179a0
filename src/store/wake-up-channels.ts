// The PostgreSQL LISTEN/NOTIFY channels that carry wake-ups between
// instances (not a notification's email or Slack channel). A transaction
// notifies on commit; every instance LISTENs (see signals.ts) and wakes its
// waiters.

/** Carries the id of a pause that changed. */
export const PAUSE_CHANNEL = 'pausepoint_pause';
/** Carries a developer id whose API keys were rotated (caches must forget them). */
export const KEYS_CHANNEL = 'pausepoint_keys';
/** Webhook deliveries or notifications were written: workers should look now. */
export const QUEUED_CHANNEL = 'pausepoint_queued';
