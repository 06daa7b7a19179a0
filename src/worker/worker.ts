import type { Services } from '../app.js';
import { expirePausesTick } from './expire-pauses.js';
import { Loop } from './loop.js';

/** The background work of an instance (ROLE=all or worker). */
export class Worker {
  private readonly loops: Loop[];

  constructor(services: Services) {
    this.loops = [new Loop('expire-pauses', expirePausesTick(services), services.logger)];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }
}
