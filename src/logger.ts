import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type ChildLoggerOptions, type DestinationStream, type Logger, pino } from 'pino';
import { redactPaths, requestSerializer } from './log-redaction.js';

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

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<Logger['info']>;

/**
 * A request's logger (Fastify's childLoggerFactory). pino's child() serialises
 * and redacts the request id at once, about 4 µs, and at LOG_LEVEL=warn most
 * requests never log a line; so the child is made the first time a line is
 * logged at a level the process logs.
 */
export class RequestLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.child().level = level;
  }

  fatal(...args: LogArgs): void {
    this.log('fatal', args);
  }
  error(...args: LogArgs): void {
    this.log('error', args);
  }
  warn(...args: LogArgs): void {
    this.log('warn', args);
  }
  info(...args: LogArgs): void {
    this.log('info', args);
  }
  debug(...args: LogArgs): void {
    this.log('debug', args);
  }
  trace(...args: LogArgs): void {
    this.log('trace', args);
  }
  silent(): void {}

  /** The real pino child, with this request's bindings and `more`. */
  child(more?: Record<string, unknown>, options?: ChildLoggerOptions): Logger {
    this.#child ??= this.parent.child(this.bindings);
    return more || options ? this.#child.child(more ?? {}, options) : this.#child;
  }

  private log(level: Level, args: LogArgs): void {
    if (!(this.#child ?? this.parent).isLevelEnabled(level)) return;
    this.child()[level](...args);
  }
}

/**
 * Fastify's request log, one line per request: "request completed" (or
 * "request errored") when the answer is sent, with the request (its URL with
 * tokens cut out, see log-redaction.ts), the status and the time. Fastify's
 * own "incoming request" line is logged only at debug, to follow a long-poll
 * as it arrives: at LOG_LEVEL=info a second line per request cost as much
 * CPU as the read it logged.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    if (error)
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
