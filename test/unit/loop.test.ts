import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Tick, TickContext } from '../../src/actions/ticks.js';
import { createLogger } from '../../src/logger.js';
import { Loop } from '../../src/worker/loop.js';

// The worker's loop: run a tick, sleep as long as it says or until woken,
// repeat until stopped; a failing tick is logged and tried again a second
// later. Fake timers make every sleep exact, so nothing here depends on how
// busy the machine is.

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** A tick that records when it ran and returns the next delay from `delays` (the last one repeats). */
function recordingTick(delays: number[]) {
  const runs: number[] = [];
  const tick: Tick = async () => {
    runs.push(Date.now());
    return delays[Math.min(runs.length - 1, delays.length - 1)] ?? 0;
  };
  return { tick, runs };
}

const loops: Loop[] = [];
function newLoop(tick: Tick, logger = capture().logger): Loop {
  const loop = new Loop('test-loop', tick, logger);
  loops.push(loop);
  return loop;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  vi.useRealTimers();
});

describe('Loop', () => {
  it('runs a tick at once, then again after the delay each tick returns', async () => {
    const { tick, runs } = recordingTick([100, 250, 1000]);
    newLoop(tick).start();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([0]);
    await vi.advanceTimersByTimeAsync(99);
    expect(runs).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([0, 100]);
    await vi.advanceTimersByTimeAsync(2250); // to 2350
    expect(runs).toEqual([0, 100, 350, 1350, 2350]);
  });

  it('starts only one run, however often start() is called', async () => {
    const { tick, runs } = recordingTick([1000]);
    const loop = newLoop(tick);
    loop.start();
    loop.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toEqual([0, 1000]);
  });

  it('ends its sleep when woken, and sleeps the full delay again afterwards', async () => {
    const { tick, runs } = recordingTick([10_000]);
    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(300);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([0, 300]);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(runs).toEqual([0, 300]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([0, 300, 10_300]);
  });

  it('does not lose a wake that comes while a tick is running: the next sleep ends at once', async () => {
    let release: (() => void) | undefined;
    const runs: number[] = [];
    const tick: Tick = async () => {
      runs.push(Date.now());
      if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return 10_000;
    };
    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(50);
    loop.wake(); // nobody is sleeping yet
    await vi.advanceTimersByTimeAsync(50);
    release?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([0, 100]);
    // One wake ends one sleep, not every sleep after it.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toEqual([0, 100]);
  });

  it('lets a tick wait with pause(): false when the time is up, true when woken or stopped', async () => {
    const waited: boolean[] = [];
    let context: TickContext | undefined;
    const tick: Tick = async (ctx) => {
      context = ctx;
      waited.push(await ctx.pause(200));
      waited.push(await ctx.pause(200));
      waited.push(await ctx.pause(200));
      return 10_000;
    };
    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(200);
    expect(waited).toEqual([false]);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(waited).toEqual([false, true]);
    expect(context?.stopping).toBe(false);
    const stopped = loop.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(waited).toEqual([false, true, true]);
    expect(context?.stopping).toBe(true);
    await stopped;
  });

  it('ends a pause when its `until` settles, and keeps the wake that comes after for the next pause', async () => {
    const waited: Array<[boolean, number]> = [];
    let progress: (() => void) | undefined;
    let release: (() => void) | undefined;
    const tick: Tick = async (ctx) => {
      if (waited.length > 0) return 10_000;
      waited.push([await ctx.pause(10_000, new Promise<void>((resolve) => (progress = resolve))), Date.now()]);
      await new Promise<void>((resolve) => (release = resolve)); // the test wakes the loop here
      waited.push([await ctx.pause(10_000), Date.now()]);
      return 10_000;
    };
    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(100);
    progress?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(waited).toEqual([[false, 100]]);
    loop.wake(); // nobody pauses now
    release?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(waited).toEqual([
      [false, 100],
      [true, 100],
    ]);
  });

  it('stops cleanly: ends the sleep, waits for the tick in hand, and starts no other', async () => {
    let release: (() => void) | undefined;
    const runs: number[] = [];
    let sawStopping = false;
    const tick: Tick = async (context) => {
      runs.push(Date.now());
      if (runs.length === 2) {
        await new Promise<void>((resolve) => (release = resolve));
        sawStopping = context.stopping;
      }
      return 10_000;
    };
    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(10_000); // the second tick starts and hangs
    expect(runs).toEqual([0, 10_000]);

    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stopped).toBe(false); // it waits for the tick in hand
    release?.();
    await stopping;
    expect(sawStopping).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual([0, 10_000]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops at once from a sleep, and before a run is started does nothing', async () => {
    const { tick, runs } = recordingTick([60_000]);
    const idle = newLoop(tick);
    await idle.stop();
    expect(runs).toEqual([]);

    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    await loop.stop(); // resolves without any timer advancing
    expect(runs).toEqual([0]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('survives a failing tick: logs it with the loop name and tries again a second later', async () => {
    const { logger, lines } = capture();
    const runs: number[] = [];
    const tick: Tick = async () => {
      runs.push(Date.now());
      if (runs.length <= 2) throw new Error(`boom ${runs.length}`);
      return 5_000;
    };
    newLoop(tick, logger).start();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([0]);
    expect(lines).toMatchObject([{ level: 50, loop: 'test-loop', err: { message: 'boom 1' } }]);
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([0, 1000]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toEqual([0, 1000, 2000]);
    expect(lines).toHaveLength(2);
    // Healthy again: back to the tick's own delay.
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toEqual([0, 1000, 2000, 7000]);
  });
  it('runOnce() runs a tick that begins after the call, and resolves when it has ended', async () => {
    let release: (() => void) | undefined;
    const runs: number[] = [];
    const tick: Tick = async () => {
      runs.push(Date.now());
      if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return 10_000;
    };
    const loop = newLoop(tick);
    loop.start();
    await vi.advanceTimersByTimeAsync(50); // the first tick is in hand
    let done = false;
    const once = loop.runOnce().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(50);
    expect(done).toBe(false); // the tick in hand began before the call: it does not count
    release?.();
    await once;
    expect(runs).toEqual([0, 100]);
    // Then the loop sleeps its full delay again.
    await vi.advanceTimersByTimeAsync(9_999);
    expect(runs).toEqual([0, 100]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([0, 100, 10_100]);
  });

  it('runOnce() runs the tick itself when the loop is not running, and resolves when a loop stops', async () => {
    const { tick, runs } = recordingTick([60_000]);
    const idle = newLoop(tick);
    await idle.runOnce();
    expect(runs).toEqual([0]);

    let release: (() => void) | undefined;
    const hanging: Tick = async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return 60_000;
    };
    const loop = newLoop(hanging);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    const once = loop.runOnce();
    const stopped = loop.stop();
    release?.();
    await Promise.all([once, stopped]);
  });
});
