import type { Logger } from '../logger.js';

// A background loop: run one tick, sleep as long as the tick says (or until
// woken), repeat until stopped. A failing tick is logged and retried after a
// second; it never kills the process.

export type Tick = () => Promise<number>;

const RETRY_AFTER_ERROR_MS = 1000;

export class Loop {
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private running: Promise<void> | undefined;

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
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let delay: number;
      try {
        delay = await this.tick();
      } catch (error) {
        this.logger.error({ err: error, loop: this.name }, 'worker loop failed; retrying');
        delay = RETRY_AFTER_ERROR_MS;
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
