import { type DestinationStream, type Logger, pino } from 'pino';
import { redactPaths, requestSerializer } from './http/logging.js';

export type { Logger };

/** The one logger of a process: JSON lines, secrets redacted. */
export function createLogger(level: string, stream?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: { req: requestSerializer },
  };
  return stream ? pino(options, stream) : pino(options);
}
