import { defineConfig } from 'vitest/config';

// The chaos test (npm run test:chaos) runs on its own: the root config leaves test/chaos/ out of npm test.
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 200_000,
    hookTimeout: 60_000,
  },
});
