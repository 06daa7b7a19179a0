import type { Tick, TickContext } from '../actions/ticks.js';
import type { Logger } from '../logger.js';

// A background loop: run one tick, sleep as long as the tick says (or until
// woken), repeat until stopped. A failing tick is logged and retried after a
// second; it never kills the process.

const RETRY_AFTER_ERROR_MS = 1000;

export class Loop implements TickContext {
  private stopped = false;
  /** A wake that came while nobody was pausing: the next pause ends at once. */
  private wokenMeanwhile = false;
  private current: { timer: NodeJS.Timeout; resolve: (woken: boolean) => void } | undefined;
  private running: Promise<void> | undefined;
  /** Ticks begun so far, and runOnce() callers waiting for the tick numbered `after` to end. */
  private ticksStarted = 0;
  private readonly tickWaiters: Array<{ tick: number; resolve: () => void }> = [];

  constructor(
    private readonly name: string,
    private readonly tick: Tick,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Ends the current sleep now, e.g. when new work was written. */
  wake(): void {
    if (!this.endPause(true)) this.wokenMeanwhile = true;
  }

  /**
   * Runs one tick that begins after this call and resolves when it has ended
   * (a failing tick is logged as usual). Tests use it instead of sleeping until
   * the loop's next round; a loop that is not running runs the tick itself.
   */
  async runOnce(): Promise<void> {
    if (!this.running || this.stopped) {
      await this.tick(this).catch((error) => this.logger.error({ err: error, loop: this.name }, 'worker loop failed'));
      return;
    }
    const done = new Promise<void>((resolve) => this.tickWaiters.push({ tick: this.ticksStarted + 1, resolve }));
    this.wake();
    await done;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
  }

  get stopping(): boolean {
    return this.stopped;
  }

  pause(ms: number, until?: Promise<unknown>): Promise<boolean> {
    this.endPause(false); // a newer pause replaces one nobody waits for any more
    if (this.stopped || this.wokenMeanwhile) {
      this.wokenMeanwhile = false;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const current = { timer: setTimeout(() => this.endPause(false), ms), resolve };
      this.current = current;
      // Ended with `until`, not left to a wake nobody would hear: that wake must end the next pause.
      const ended = () => {
        if (this.current === current) this.endPause(false);
      };
      until?.then(ended, ended);
    });
  }

  private settleWaiters(endedTick: number): void {
    for (let i = this.tickWaiters.length - 1; i >= 0; i--) {
      const waiter = this.tickWaiters[i]!;
      if (waiter.tick > endedTick) continue;
      this.tickWaiters.splice(i, 1);
      waiter.resolve();
    }
  }

  private endPause(woken: boolean): boolean {
    const current = this.current;
    if (!current) return false;
    this.current = undefined;
    clearTimeout(current.timer);
    current.resolve(woken);
    return true;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let delay: number;
      const tick = ++this.ticksStarted;
      try {
        delay = await this.tick(this);
      } catch (error) {
        this.logger.error({ err: error, loop: this.name }, 'worker loop failed; retrying');
        delay = RETRY_AFTER_ERROR_MS;
      }
      this.settleWaiters(tick);
      if (this.stopped) break;
      await this.pause(delay);
    }
    this.settleWaiters(Number.POSITIVE_INFINITY); // stopped: no further tick will come
  }
}
