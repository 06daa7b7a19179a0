// Loaded into the service only by `bench/pending-memory.ts --breakdown`
// (node --import): on SIGUSR2 it writes the process's own view of its memory
// to BENCH_MEMORY_PROBE_FILE, so a reading of RSS can be split into V8 heap
// spaces, external memory and the rest (code, native libraries, SQLite).
import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.BENCH_MEMORY_PROBE_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.space_size]));
    writeFileSync(file, JSON.stringify({ ...process.memoryUsage(), spaces, at: Date.now() }));
  });
}
