import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from './domain/clock.js';
import { isoTime } from './domain/clock.js';
import { countOverduePauses, countPausesByStatus, countPendingInQueue, oldestDueInQueue } from './store/gauges.js';
import type { OutboxTable } from './store/outbox.js';
import type { Store } from './store/store.js';

// Prometheus metrics of one instance, served at GET /metrics. Counters and
// histograms are this instance's; the gauges read the database at scrape time,
// so every instance reports the same shared state.

const OUTBOX_TABLES: OutboxTable[] = ['deliveries', 'notifications'];

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'pausepoint_http_requests_total',
    help: 'HTTP requests answered, by route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'pausepoint_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
    registers: [this.registry],
  });

  readonly timeoutLag = new Histogram({
    name: 'pausepoint_timeout_lag_seconds',
    help: 'From a pause’s expires_at to its timeout being recorded.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });

  readonly outboxAttempts = new Counter({
    name: 'pausepoint_outbox_attempts_total',
    help: 'Webhook delivery and notification attempts, by outcome (succeeded, retry, failed).',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly mcpToolCalls = new Gauge({
    name: 'pausepoint_mcp_tool_calls_in_flight',
    help: 'MCP tool calls running on /mcp, by tool; ask_human and wait_for_human wait up to 55 s for a human.',
    labelNames: ['tool'] as const,
    registers: [this.registry],
  });

  constructor(store: Store, clock: Clock) {
    new Gauge({
      name: 'pausepoint_pauses',
      help: 'Pauses by status.',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        const rows = await countPausesByStatus(store);
        this.reset();
        for (const row of rows) this.set({ status: row.status }, row.count);
      },
    });
    new Gauge({
      name: 'pausepoint_outbox_depth',
      help: 'Webhook deliveries and notifications waiting to be sent (pending).',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        for (const table of OUTBOX_TABLES) {
          this.set({ queue: table }, await countPendingInQueue(store, table));
        }
      },
    });
    new Gauge({
      name: 'pausepoint_outbox_oldest_due_age_seconds',
      help: 'How long the oldest due item of each queue has waited past its due time (0 when none).',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        const now = clock.now();
        for (const table of OUTBOX_TABLES) {
          const oldest = await oldestDueInQueue(store, { table, now: isoTime(now) });
          this.set({ queue: table }, oldest ? Math.max(0, (now.getTime() - Date.parse(oldest)) / 1000) : 0);
        }
      },
    });
    new Gauge({
      name: 'pausepoint_overdue_pauses',
      help: 'Pending pauses past their expires_at, not yet timed out (should stay near 0).',
      registers: [this.registry],
      async collect() {
        this.set(await countOverduePauses(store, isoTime(clock.now())));
      },
    });
  }
}
