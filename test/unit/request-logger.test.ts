import { expect, it } from 'vitest';
import { createLogger, RequestLogger } from '../../src/logger.js';

// Fastify's per-request logger: the pino child is made only when a line is
// logged at a level the process logs, and every line carries the request id.

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

it('logs nothing below the process level, and each line at or above it under the request id', () => {
  const { logger, lines } = capture('warn');
  const requestLogger = new RequestLogger(logger, { reqId: 'req_1' });
  requestLogger.info('incoming request');
  requestLogger.debug({ detail: 1 }, 'noise');
  expect(lines).toEqual([]);

  requestLogger.warn({ attempt: 2 }, 'slow');
  requestLogger.error({ err: new Error('boom') }, 'request failed');
  expect(lines).toMatchObject([
    { level: 40, reqId: 'req_1', attempt: 2, msg: 'slow' },
    { level: 50, reqId: 'req_1', err: { message: 'boom' }, msg: 'request failed' },
  ]);
  expect(requestLogger.level).toBe('warn');
});

it('follows a level set on it, and makes children that keep the request id', () => {
  const { logger, lines } = capture('warn');
  const requestLogger = new RequestLogger(logger, { reqId: 'req_2' });
  requestLogger.level = 'debug';
  requestLogger.debug('now shown');
  requestLogger.child({ part: 'inner' }).info('from a child');
  expect(lines).toMatchObject([
    { level: 20, reqId: 'req_2', msg: 'now shown' },
    { level: 30, reqId: 'req_2', part: 'inner', msg: 'from a child' },
  ]);
  // The process logger itself is unchanged.
  expect(logger.level).toBe('warn');
});

it('redacts secrets in what it logs, as the process logger does', () => {
  const { logger, lines } = capture('info');
  new RequestLogger(logger, { reqId: 'req_3' }).info({ headers: { authorization: 'Bearer svc_test_x' } }, 'seen');
  expect(lines).toMatchObject([{ reqId: 'req_3', headers: { authorization: '[redacted]' } }]);
});
