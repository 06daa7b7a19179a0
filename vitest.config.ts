import { configDefaults, defineConfig } from 'vitest/config';

// Tests of one engine's own behaviour live in postgres-only/ and sqlite-only/
// folders; the other engine's folder is left out. TEST_DB picks the engine
// (SQLite unless it is "postgres"), as test/helpers/database.ts does.
const otherEnginesTests = process.env.TEST_DB === 'postgres' ? '**/sqlite-only/**' : '**/postgres-only/**';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    // The crash tests take minutes and run apart, by npm run test:chaos.
    exclude: [...configDefaults.exclude, 'test/chaos/**', otherEnginesTests],
    pool: 'forks',
    // Files share their worker: the service's modules load once per worker, not per file (CONTRIBUTING.md).
    isolate: false,
    maxWorkers: 2,
    // beforeAll hooks in the order written, after* hooks in reverse: test/helpers/webhook-service.ts's
    // env function reads an SMTP receiver started by an earlier beforeAll (vitest's default, pinned).
    sequence: { hooks: 'stack' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
