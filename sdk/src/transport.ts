// One request to the API, with retries: idempotent requests (GET, DELETE, and
// POST with an Idempotency-Key) are retried on 429, 5xx, a network error or a
// timeout; anything else only on 429, which the service answers before doing
// any work. Delays back off exponentially with jitter, and a Retry-After is
// honoured.
import { PausepointConnectionError, PausepointError } from './errors.js';
import type { ApiErrorBody } from './types.js';

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  apiKey: string;
  baseUrl: string;
  maxRetries: number;
  timeoutMs: number;
  fetch: Fetch;
  userAgent: string | undefined;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  idempotencyKey?: string | undefined;
  /** Added to the per-attempt timeout (for long-polls). */
  extraTimeoutMs?: number;
  signal?: AbortSignal | undefined;
}

export interface Answer<T> {
  body: T;
  status: number;
  headers: Headers;
}

const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 8_000;
const RETRY_AFTER_MAX_MS = 60_000;
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/** Errors thrown after at least one retry (so an earlier attempt may have done its work). */
const retried = new WeakSet<object>();
export const wasRetried = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && retried.has(error);

export class Transport {
  constructor(private readonly options: TransportOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  async request<T>(spec: RequestSpec): Promise<Answer<T>> {
    const idempotent = spec.method !== 'POST' || spec.idempotencyKey !== undefined;
    for (let attempt = 0; ; attempt += 1) {
      let failure: PausepointError;
      let retryAfterMs: number | undefined;
      let retryable: boolean;
      try {
        const answer = await this.attempt(spec);
        if (answer.status >= 200 && answer.status < 300) {
          return { body: parseJson(answer) as T, status: answer.status, headers: answer.headers };
        }
        failure = apiError(answer);
        retryable = answer.status === 429 || (idempotent && RETRYABLE_STATUS.has(answer.status));
        retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'));
      } catch (error) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        if (!(error instanceof PausepointConnectionError)) throw error;
        failure = error;
        retryable = idempotent;
      }
      if (!retryable || attempt >= this.options.maxRetries) {
        if (attempt > 0) retried.add(failure);
        throw failure;
      }
      const backoff = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt) * (0.5 + Math.random() * 0.5);
      await sleep(Math.max(backoff, Math.min(retryAfterMs ?? 0, RETRY_AFTER_MAX_MS)), spec.signal);
    }
  }

  private async attempt(spec: RequestSpec): Promise<{ status: number; headers: Headers; text: string }> {
    const url = new URL(this.options.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: 'application/json',
    };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers['content-type'] = 'application/json';
    }

    // One controller for the attempt: the caller's signal and the timeout both abort it.
    const controller = new AbortController();
    const timeoutMs = this.options.timeoutMs + (spec.extraTimeoutMs ?? 0);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(spec.signal?.reason);
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const response = await this.options.fetch(url.toString(), {
        method: spec.method,
        headers,
        body,
        signal: controller.signal,
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      if (timedOut) {
        throw new PausepointConnectionError(`${spec.method} ${spec.path} took longer than ${timeoutMs} ms.`, {
          code: 'timeout',
          cause: error,
        });
      }
      throw new PausepointConnectionError(
        `Could not reach pausepoint at ${this.options.baseUrl}: ${describe(error)}.`,
        { code: 'connection_error', cause: error },
      );
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    }
  }
}

function parseJson(answer: { status: number; headers: Headers; text: string }): unknown {
  if (answer.text === '') return undefined;
  try {
    return JSON.parse(answer.text);
  } catch (cause) {
    throw new PausepointError(`The service answered ${answer.status} with a body that is not JSON.`, {
      status: answer.status,
      code: 'invalid_response',
      requestId: answer.headers.get('x-request-id') ?? undefined,
      cause,
    });
  }
}

function apiError(answer: { status: number; headers: Headers; text: string }): PausepointError {
  let body: Partial<ApiErrorBody> | undefined;
  try {
    body = JSON.parse(answer.text) as Partial<ApiErrorBody>;
  } catch {}
  const error = body && typeof body.error === 'object' && body.error !== null ? body.error : undefined;
  return new PausepointError(error?.message ?? `The service answered HTTP ${answer.status}.`, {
    status: answer.status,
    code: error?.code ?? `http_${answer.status}`,
    requestId: error?.request_id ?? answer.headers.get('x-request-id') ?? undefined,
    details: error?.details,
  });
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
