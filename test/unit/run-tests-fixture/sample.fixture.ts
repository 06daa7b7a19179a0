import { afterAll, expect, it } from 'vitest';

const scenario = process.env.RUNNER_FIXTURE ?? 'pass';

it('passes', () => {
  expect(1 + 1).toBe(2);
});

// Declared only when wanted: a skipped test would fail the run for its own reason.
if (scenario === 'failing-test') {
  it('fails, as planned', () => {
    expect(1 + 1).toBe(3);
  });
}

afterAll(() => {
  // As a test file whose teardown throws after its tests passed.
  if (scenario === 'teardown-error') throw new Error('ENOTEMPTY: directory not empty (as planned)');
});
