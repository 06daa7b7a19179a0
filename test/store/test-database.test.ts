import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/database.js';

// The test helper's SQLite folder must go even while something still writes
// into it: the service's checkpoint thread closes its own connection a moment
// after the service has stopped, and SQLite may create -wal and -shm files then.

/** A thread that keeps creating files in `dir` for `ms`, as a late SQLite connection would. */
function keepWritingInto(dir: string, ms: number): { started: Promise<void>; done: Promise<void> } {
  const worker = new Worker(
    `
    const { writeFileSync } = require('node:fs');
    const { parentPort, workerData } = require('node:worker_threads');
    const until = Date.now() + workerData.ms;
    let n = 0;
    while (Date.now() < until) {
      try { writeFileSync(workerData.dir + '/late-' + n++ + '-wal', ''); } catch {}
      if (n === 1) parentPort.postMessage('started');
    }
    `,
    { eval: true, workerData: { dir, ms } },
  );
  const started = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  const done = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return { started, done };
}

describe('freshDatabase on SQLite', () => {
  it('drop() removes the folder even while files are still being created in it', { timeout: 60_000 }, async () => {
    for (let round = 0; round < 2; round++) {
      const database = await freshDatabase('sqlite');
      const dir = dirname(database.url.replace(/^sqlite:/, ''));
      // Many files, so that removing them takes long enough for the writer
      // to add one after the folder was listed, every time.
      for (let i = 0; i < 300; i++) writeFileSync(join(dir, `page-${i}`), '');
      const writer = keepWritingInto(dir, 400);
      await writer.started;
      await database.drop();
      await writer.done;
      expect(existsSync(dir)).toBe(false);
    }
  });
});
