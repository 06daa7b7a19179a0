import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// A one-file suite for test/unit/run-tests.test.ts: scripts/run-tests.mjs runs
// it as it runs the real suite. RUNNER_FIXTURE picks how it goes wrong.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['*.fixture.ts'],
  },
});
