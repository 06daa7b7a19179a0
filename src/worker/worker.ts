import { deliverWebhooksTick } from '../actions/deliveries.js';
import { expirePausesTick } from '../actions/expiry.js';
import { followUpReviewersTick } from '../actions/follow-ups.js';
import { indexTitlesTick } from '../actions/index-titles.js';
import { pruneAttemptsTick } from '../actions/prune-attempts.js';
import { sendNotificationsTick } from '../actions/send-notifications.js';
import type { ServiceContext } from '../context.js';
import { Loop } from './loop.js';

/** The background work of an instance (ROLE=all or worker). */
export class Worker {
  private readonly loops: Loop[];
  /** The loops that send what the others queue. */
  private readonly senders: Loop[];
  private readonly stopHearing: () => void;

  constructor(services: ServiceContext) {
    const deliveries = new Loop('deliver-webhooks', deliverWebhooksTick(services), services.logger);
    const notifications = new Loop('send-notifications', sendNotificationsTick(services), services.logger);
    this.senders = [deliveries, notifications];
    this.loops = [
      new Loop('expire-pauses', expirePausesTick(services), services.logger),
      new Loop('follow-up-reviewers', followUpReviewersTick(services), services.logger),
      new Loop('prune-attempts', pruneAttemptsTick(services), services.logger),
      deliveries,
      notifications,
    ];
    // PostgreSQL keeps its own text index.
    if (services.store.dialect === 'sqlite') {
      this.loops.push(new Loop('index-titles', indexTitlesTick(services), services.logger));
    }
    // Deliveries or notifications were written: start them now, not at the next poll.
    this.stopHearing = services.store.wakeUps.workQueued.on(() => {
      deliveries.wake();
      notifications.wake();
    });
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  /**
   * Runs every loop once, now: first those that find due work (expiry,
   * follow-ups, the title index), then the senders, so what the first round
   * queued is attempted before this resolves. For tests, instead of sleeping
   * until the loops' next round.
   */
  async runOnce(): Promise<void> {
    await Promise.all(this.loops.filter((loop) => !this.senders.includes(loop)).map((loop) => loop.runOnce()));
    await Promise.all(this.senders.map((loop) => loop.runOnce()));
  }

  async stop(): Promise<void> {
    this.stopHearing();
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }
}
