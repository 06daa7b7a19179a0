// The "time left" line while `pausepoint ask` waits, on a terminal only: it is
// drawn on stderr, so stdout stays the outcome alone.
import type { Pause } from '@pausepoint/sdk';
import { formatTimeLeft } from '../domain/time-format.js';

export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private readonly endsAt: number;
  private readonly waitingFor: string;

  constructor(pause: Pause, enabled = process.stdout.isTTY === true && process.stderr.isTTY === true) {
    // The pause's lifetime measured from now on this machine's clock, so a
    // skewed clock does not skew the countdown.
    this.endsAt = Date.now() + (Date.parse(pause.expires_at) - Date.parse(pause.created_at));
    this.waitingFor = pause.reviewers.length > 0 ? 'the reviewers' : 'an answer';
    if (!enabled) return;
    this.draw();
    this.timer = setInterval(() => this.draw(), 1000);
    this.timer.unref();
  }

  private draw(): void {
    const left = formatTimeLeft(this.endsAt - Date.now());
    process.stderr.write(`\r\x1b[2KWaiting for ${this.waitingFor}… ${left} left (Ctrl-C cancels)`);
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    process.stderr.write('\r\x1b[2K');
  }
}
