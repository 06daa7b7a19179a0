import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    // The crash tests take minutes and run apart, by npm run test:chaos.
    exclude: [...configDefaults.exclude, 'test/chaos/**'],
    pool: 'forks',
    // Files share their worker: the service's modules load once per worker, not per file (CONTRIBUTING.md).
    isolate: false,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
