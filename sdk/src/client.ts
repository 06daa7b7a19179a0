import { randomUuid } from './crypto.js';
import { FormValuesError, PausepointError, WaitTimeoutError } from './errors.js';
import {
  type JsonSchemaForm,
  type PauseParamsWithForm,
  parseFormValues,
  type StandardSchemaForm,
  withJsonSchemaForm,
} from './forms.js';
import { AutoPaginator } from './pagination.js';
import { isStandardSchema, type StandardOutput, type StandardSchemaWithJson } from './standard-schema.js';
import { type Fetch, sleep, Transport, wasRetried } from './transport.js';
import type {
  CreatePauseParams,
  CreateWebhookParams,
  DeletedWebhook,
  Delivery,
  DeliveryWithAttempts,
  EventRecord,
  Event as EventsPage,
  ListDeliveriesParams,
  ListEventsParams,
  ListPage,
  ListPausesParams,
  Outcome,
  Pause,
  RecoverWebhookParams,
  RetriedDelivery,
  RetriedNotification,
  RotatedWebhookSecret,
  Timeline,
  Vote,
  Webhook,
  WebhookRecovery,
} from './types.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
/** The longest `?wait=` the SDK asks for: under the service's cap (60 s) and the usual 60 s idle timeout of proxies. */
const LONG_POLL_SECONDS = 50;

export interface PausepointOptions {
  /** An API key (`svc_live_…` or `svc_test_…`). Default: the `PAUSEPOINT_API_KEY` environment variable. */
  apiKey?: string | undefined;
  /** Where the service is. Default: `PAUSEPOINT_BASE_URL`, else `http://127.0.0.1:3000`. */
  baseUrl?: string | undefined;
  /** Retries of a failed idempotent request (429, 5xx, network error, timeout). Default 2. */
  maxRetries?: number | undefined;
  /** Time allowed for one attempt, in ms (long-polls get their wait on top). Default 30,000. */
  timeoutMs?: number | undefined;
  /** A fetch to use instead of `globalThis.fetch`. */
  fetch?: Fetch | undefined;
  /** A User-Agent header to send (where the runtime allows one). */
  userAgent?: string | undefined;
}

export interface RequestOptions {
  /** Aborts the call; it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

export interface CreatePauseOptions extends RequestOptions {
  /** Makes the create safe to repeat: a repeat within 24 h returns the first pause. Generated when absent. */
  idempotencyKey?: string | undefined;
}

export interface GetPauseOptions extends RequestOptions {
  /** Wait up to this many seconds (≤ 60) for the pause to leave `pending`. */
  wait?: number | undefined;
}

export interface WaitForOptions extends RequestOptions {
  /** Give up after this many ms with a `WaitTimeoutError` (the pause stays as it is). Default: wait until it ends. */
  timeoutMs?: number | undefined;
}

export interface AskOptions extends CreatePauseOptions {
  /** Give up after this many ms; default: until the pause ends (it always does, at `expires_at`). */
  timeoutMs?: number | undefined;
  /** Called once the pause exists, e.g. to show its `response_url`. */
  onCreated?: ((pause: Pause) => void) | undefined;
  /** Cancel the pause when giving up (timeout or abort), so nobody answers in vain. Default true. */
  cancelOnAbandon?: boolean | undefined;
}

export interface ListenOptions extends RequestOptions {
  /** Start from this time (default: now, by the service's clock). Earlier events are replayed. */
  since?: string | Date | undefined;
  /** Called when a request fails and listening goes on after a pause; without it, errors are retried silently. */
  onError?: ((error: unknown) => void) | undefined;
  /** Called once the starting point is fixed: every event from `since` on will be yielded. */
  onReady?: ((since: Date) => void) | undefined;
}

function environment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name];
  return value === undefined || value === '' ? undefined : value;
}

const path = (template: string, ...ids: string[]) => {
  let index = 0;
  return template.replace(/\{[^}]+\}/g, () => encodeURIComponent(ids[index++] ?? ''));
};

/**
 * The pausepoint client.
 *
 * ```ts
 * const pausepoint = new Pausepoint({ apiKey: process.env.PAUSEPOINT_API_KEY, baseUrl: 'https://approve.example.com' });
 * const { choice } = await pausepoint.ask({ title: 'Deploy v2 to production?', timeout_default: 'reject' });
 * ```
 */
export class Pausepoint {
  readonly pauses: Pauses;
  readonly webhooks: Webhooks;
  readonly events: Events;
  readonly baseUrl: string;

  constructor(options: PausepointOptions = {}) {
    const apiKey = options.apiKey ?? environment('PAUSEPOINT_API_KEY');
    if (!apiKey) {
      throw new PausepointError('No API key: pass { apiKey } or set PAUSEPOINT_API_KEY.', { code: 'missing_api_key' });
    }
    const fetchImpl = options.fetch ?? (globalThis.fetch as Fetch | undefined);
    if (typeof fetchImpl !== 'function') {
      throw new PausepointError('This runtime has no fetch; pass { fetch }.', { code: 'missing_fetch' });
    }
    this.baseUrl = (options.baseUrl ?? environment('PAUSEPOINT_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    const transport = new Transport({
      apiKey,
      baseUrl: this.baseUrl,
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: (input, init) => fetchImpl(input, init),
      userAgent: options.userAgent,
    });
    this.pauses = new Pauses(transport);
    this.webhooks = new Webhooks(transport);
    this.events = new Events(transport);
  }

  /**
   * Asks a human and waits for the answer: `pauses.create` then `pauses.waitFor`.
   * Resolves with the outcome once the pause is answered, times out (with its
   * `timeout_default`, or a null choice) or is cancelled.
   *
   * With a `form` whose schema is a Standard Schema that gives JSON Schema (a
   * zod 4 object…), the service gets its JSON Schema and the outcome's
   * `values` are parsed by it, typed as its output (a `FormValuesError` when
   * they do not pass). With a JSON Schema object, type them with
   * `ask<Values>(…)`.
   */
  ask<Schema extends StandardSchemaWithJson>(
    params: PauseParamsWithForm<StandardSchemaForm<Schema>>,
    options?: AskOptions,
  ): Promise<Outcome<StandardOutput<Schema>>>;
  ask<Values extends object = Record<string, unknown>>(
    params: PauseParamsWithForm<JsonSchemaForm<Values>>,
    options?: AskOptions,
  ): Promise<Outcome<Values>>;
  ask(params: CreatePauseParams, options?: AskOptions): Promise<Outcome>;
  async ask(
    params: CreatePauseParams | PauseParamsWithForm<unknown>,
    options: AskOptions = {},
  ): Promise<Outcome<unknown>> {
    const schema = (params.form as { schema?: unknown } | undefined)?.schema;
    const outcome = await this.askAndWait(withJsonSchemaForm(params), options);
    return isStandardSchema(schema) ? formOutcome(outcome, schema as StandardSchemaWithJson) : outcome;
  }

  private async askAndWait(params: CreatePauseParams, options: AskOptions): Promise<Outcome> {
    const { signal } = options;
    const pause = await this.pauses.create(params, { idempotencyKey: options.idempotencyKey, signal });
    options.onCreated?.(pause);
    try {
      return outcomeOf(await this.pauses.waitFor(pause.id, { timeoutMs: options.timeoutMs, signal }));
    } catch (error) {
      const abandoned = error instanceof WaitTimeoutError || signal?.aborted === true;
      if (!abandoned || options.cancelOnAbandon === false) throw error;
      try {
        await this.pauses.cancel(pause.id);
      } catch (cancelError) {
        // Answered (or expired) at the last moment: that is the outcome.
        if (!signal?.aborted && cancelError instanceof PausepointError && cancelError.code === 'pause_not_pending') {
          return outcomeOf(await this.pauses.get(pause.id));
        }
      }
      throw error;
    }
  }
}

/** The outcome of a pause that has ended. */
export function outcomeOf(pause: Pause): Outcome {
  if (pause.status === 'pending') throw new TypeError(`pause ${pause.id} is still pending`);
  const response = pause.status === 'cancelled' ? null : pause.response;
  return {
    status: pause.status,
    choice: response?.choice ?? null,
    text: response?.text ?? null,
    values: response?.values ?? null,
    edited: response?.edited ?? false,
    response_at: response?.response_at ?? null,
    responded_by: response?.responded_by ?? null,
    votes: response?.votes ?? votesOf(pause),
    pause,
  };
}

/**
 * The outcome of a pause that has ended, its form's values parsed by the
 * form's Standard Schema (as `ask()` gives it): for a pause made with
 * `pauses.create` and waited for with `pauses.waitFor`.
 */
export async function formOutcome<Schema extends StandardSchemaWithJson>(
  pauseOrOutcome: Pause | Outcome,
  schema: Schema,
): Promise<Outcome<StandardOutput<Schema>>> {
  const outcome = 'object' in pauseOrOutcome ? outcomeOf(pauseOrOutcome) : pauseOrOutcome;
  if (outcome.values === null) return { ...outcome, values: null };
  try {
    return { ...outcome, values: await parseFormValues(schema, outcome.values) };
  } catch (error) {
    if (error instanceof FormValuesError) error.outcome = outcome;
    throw error;
  }
}

/** The votes cast on a pause, oldest first, from its reviewers (for a pause without a response). */
function votesOf(pause: Pause): Vote[] {
  const votes: Vote[] = [];
  for (const reviewer of pause.reviewers) {
    if (reviewer.vote === null) continue;
    const { choice, text, values, voted_at } = reviewer.vote;
    votes.push({ reviewer_id: reviewer.id, email: reviewer.email, choice, text, values, voted_at });
  }
  return votes.sort((a, b) => Date.parse(a.voted_at) - Date.parse(b.voted_at));
}

export class Pauses {
  constructor(private readonly transport: Transport) {}

  /**
   * Creates a pause. Retried safely: an idempotency key is generated when you
   * give none. A form's schema may be a Standard Schema that gives JSON Schema
   * (a zod 4 object…): its JSON Schema is sent (see `formOutcome`).
   */
  create<Schema extends StandardSchemaWithJson>(
    params: PauseParamsWithForm<StandardSchemaForm<Schema>>,
    options?: CreatePauseOptions,
  ): Promise<Pause>;
  create<Values extends object = Record<string, unknown>>(
    params: PauseParamsWithForm<JsonSchemaForm<Values>>,
    options?: CreatePauseOptions,
  ): Promise<Pause>;
  create(params: CreatePauseParams, options?: CreatePauseOptions): Promise<Pause>;
  async create(
    params: CreatePauseParams | PauseParamsWithForm<unknown>,
    options: CreatePauseOptions = {},
  ): Promise<Pause> {
    const body = withJsonSchemaForm(params);
    const idempotencyKey = options.idempotencyKey ?? (await randomUuid());
    const answer = await this.transport.request<Pause>({
      method: 'POST',
      path: '/v1/pause',
      body,
      idempotencyKey,
      signal: options.signal,
    });
    return answer.body;
  }

  /** Reads a pause; with `{ wait }`, waits up to that many seconds for it to leave `pending`. */
  async get(id: string, options: GetPauseOptions = {}): Promise<Pause> {
    const wait = options.wait === undefined ? undefined : Math.max(0, Math.min(60, Math.floor(options.wait)));
    const answer = await this.transport.request<Pause>({
      method: 'GET',
      path: path('/v1/pause/{id}', id),
      query: { wait },
      extraTimeoutMs: (wait ?? 0) * 1000,
      signal: options.signal,
    });
    return answer.body;
  }

  /**
   * The pause's audit record, oldest first: created, notified, reminded,
   * escalated, each vote, and the outcome, with who did it (`actor`).
   */
  async timeline(id: string, options: RequestOptions = {}): Promise<Timeline> {
    const answer = await this.transport.request<Timeline>({
      method: 'GET',
      path: path('/v1/pause/{id}/timeline', id),
      signal: options.signal,
    });
    return answer.body;
  }

  /**
   * Sends a `failed` notification of the pause again (same content), through
   * the worker as the first time. Any other is a 409 `notification_not_failed`.
   */
  async retryNotification(
    pauseId: string,
    notificationId: string,
    options: RequestOptions = {},
  ): Promise<RetriedNotification> {
    const answer = await this.transport.request<RetriedNotification>({
      method: 'POST',
      path: path('/v1/pause/{id}/notifications/{notification_id}/retry', pauseId, notificationId),
      signal: options.signal,
    });
    return answer.body;
  }

  /** Every pause, newest first, fetched page by page as you iterate. `limit` is the page size. */
  list(params: ListPausesParams = {}): AutoPaginator<Pause> {
    return new AutoPaginator<Pause>(async (startingAfter) => {
      const answer = await this.transport.request<ListPage<Pause>>({
        method: 'GET',
        path: '/v1/pause',
        query: { status: params.status, limit: params.limit, starting_after: startingAfter },
      });
      return answer.body;
    }, params.starting_after);
  }

  /** Cancels a pending pause (emits `pause.cancelled`); a pause that has ended is a 409 `pause_not_pending`. */
  async cancel(id: string, options: RequestOptions = {}): Promise<Pause> {
    try {
      const answer = await this.transport.request<Pause>({
        method: 'DELETE',
        path: path('/v1/pause/{id}', id),
        signal: options.signal,
      });
      return answer.body;
    } catch (error) {
      // A retry after a lost answer finds the pause already cancelled: by us.
      if (wasRetried(error) && error instanceof PausepointError && error.code === 'pause_not_pending') {
        const pause = await this.get(id, options);
        if (pause.status === 'cancelled') return pause;
      }
      throw error;
    }
  }

  /**
   * Long-polls until the pause leaves `pending` and returns it. Rejects with a
   * `WaitTimeoutError` after `timeoutMs`, or with the signal's reason on abort.
   */
  async waitFor(id: string, options: WaitForOptions = {}): Promise<Pause> {
    const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
    let last: Pause | undefined;
    for (;;) {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) {
        throw new WaitTimeoutError(`Pause ${id} is still pending after ${options.timeoutMs} ms.`, last);
      }
      const wait = Math.max(1, Math.min(LONG_POLL_SECONDS, Math.ceil(remainingMs / 1000)));
      const started = Date.now();
      last = await this.get(id, { wait, signal: options.signal });
      if (last.status !== 'pending') return last;
      // The service answers early only while shutting down: don't spin.
      if (Date.now() - started < wait * 1000 - 1000) await sleep(250, options.signal);
    }
  }
}

export class Webhooks {
  constructor(private readonly transport: Transport) {}

  /** Registers a webhook: an `https://` URL, the events it wants, and a secret of 16+ characters that signs every delivery. */
  async create(params: CreateWebhookParams, options: RequestOptions = {}): Promise<Webhook> {
    const answer = await this.transport.request<Webhook>({
      method: 'POST',
      path: '/v1/webhooks',
      body: params,
      signal: options.signal,
    });
    return answer.body;
  }

  /** This key's webhooks (its mode's). */
  list(): AutoPaginator<Webhook> {
    return new AutoPaginator<Webhook>(async (startingAfter) => {
      const answer = await this.transport.request<ListPage<Webhook>>({
        method: 'GET',
        path: '/v1/webhooks',
        query: { starting_after: startingAfter },
      });
      return answer.body;
    });
  }

  /** Deletes a webhook; its pending deliveries are dropped. */
  async delete(id: string, options: RequestOptions = {}): Promise<DeletedWebhook> {
    try {
      const answer = await this.transport.request<DeletedWebhook>({
        method: 'DELETE',
        path: path('/v1/webhooks/{webhook_id}', id),
        signal: options.signal,
      });
      return answer.body;
    } catch (error) {
      // A retry after a lost answer finds it gone: deleted by the first attempt.
      if (wasRetried(error) && error instanceof PausepointError && error.status === 404) {
        return { id, object: 'webhook', deleted: true };
      }
      throw error;
    }
  }

  /** A webhook's deliveries, newest first, fetched page by page. */
  deliveries(id: string, params: ListDeliveriesParams = {}): AutoPaginator<Delivery> {
    return new AutoPaginator<Delivery>(async (startingAfter) => {
      const answer = await this.transport.request<ListPage<Delivery>>({
        method: 'GET',
        path: path('/v1/webhooks/{webhook_id}/deliveries', id),
        query: { limit: params.limit, starting_after: startingAfter },
      });
      return answer.body;
    }, params.starting_after);
  }

  /** One delivery with every attempt kept of it. */
  async getDelivery(
    webhookId: string,
    deliveryId: string,
    options: RequestOptions = {},
  ): Promise<DeliveryWithAttempts> {
    const answer = await this.transport.request<DeliveryWithAttempts>({
      method: 'GET',
      path: path('/v1/webhooks/{webhook_id}/deliveries/{delivery_id}', webhookId, deliveryId),
      signal: options.signal,
    });
    return answer.body;
  }

  /**
   * Gives the webhook a new secret, answered this once (`secret`). For 24 hours
   * deliveries are signed with the old one too; rotating again drops the oldest.
   */
  async rotateSecret(id: string, options: RequestOptions = {}): Promise<RotatedWebhookSecret> {
    const answer = await this.transport.request<RotatedWebhookSecret>({
      method: 'POST',
      path: path('/v1/webhooks/{webhook_id}/rotate-secret', id),
      signal: options.signal,
    });
    return answer.body;
  }

  /** Turns a disabled webhook back on (`status: "active"`). */
  async enable(id: string, options: RequestOptions = {}): Promise<Webhook> {
    const answer = await this.transport.request<Webhook>({
      method: 'POST',
      path: path('/v1/webhooks/{webhook_id}/enable', id),
      signal: options.signal,
    });
    return answer.body;
  }

  /** Re-queues the window's failed deliveries and delivers the events missed while disabled, once each. */
  async recover(id: string, params: RecoverWebhookParams, options: RequestOptions = {}): Promise<WebhookRecovery> {
    const answer = await this.transport.request<WebhookRecovery>({
      method: 'POST',
      path: path('/v1/webhooks/{webhook_id}/recover', id),
      body: params,
      signal: options.signal,
    });
    return answer.body;
  }

  /** Re-queues a failed delivery (same body, same signature). */
  async retryDelivery(webhookId: string, deliveryId: string, options: RequestOptions = {}): Promise<RetriedDelivery> {
    const answer = await this.transport.request<RetriedDelivery>({
      method: 'POST',
      path: path('/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', webhookId, deliveryId),
      signal: options.signal,
    });
    return answer.body;
  }
}

const OVERLAP_MS = 5_000;
const LISTEN_WAIT_SECONDS = 30;
const LISTEN_RETRY_MAX_MS = 30_000;

export class Events {
  constructor(private readonly transport: Transport) {}

  /** One page of this key's events (its mode's), oldest first, from `since`; with `wait`, waits for the first. */
  async list(params: ListEventsParams = {}, options: RequestOptions = {}): Promise<EventsPage> {
    const answer = await this.transport.request<EventsPage>({
      method: 'GET',
      path: '/v1/events',
      query: { since: params.since, limit: params.limit, wait: params.wait },
      extraTimeoutMs: (params.wait ?? 0) * 1000,
      signal: options.signal,
    });
    return answer.body;
  }

  /**
   * Every event from now on (or from `since`), each once, as they happen, by
   * long-polling. Ends when the signal aborts. Passing failures (network, 5xx,
   * 429) are retried for as long as it takes; others (a bad key) are thrown.
   */
  async *listen(options: ListenOptions = {}): AsyncGenerator<EventRecord, void, undefined> {
    const { signal } = options;
    const seen = new Map<string, number>();
    let newest = 0;
    let floor = 0;
    let failures = 0;
    /** Marks an event seen; true when it is new and from `since` on. */
    const accept = (event: EventRecord): boolean => {
      if (seen.has(event.id)) return false;
      const at = Date.parse(event.created_at);
      seen.set(event.id, at);
      newest = Math.max(newest, at);
      return at >= floor;
    };
    try {
      let start: number;
      if (options.since === undefined) {
        // "From now on": every event that exists already is marked seen, so
        // what follows is exactly what was not there yet.
        start = await this.serverNow(signal);
        floor = start - OVERLAP_MS;
        newest = floor - 1;
        for await (const event of this.pagesFrom(floor, signal)) accept(event);
      } else {
        start = floor = new Date(options.since).getTime();
        if (Number.isNaN(floor)) throw new TypeError(`since: not a time: ${String(options.since)}`);
        newest = floor - 1;
      }
      options.onReady?.(new Date(start));
      for (;;) {
        try {
          // Catch up from a little before the newest event seen: events of
          // concurrent transactions can commit slightly out of time order.
          for await (const event of this.pagesFrom(Math.max(floor, newest - OVERLAP_MS), signal)) {
            if (accept(event)) yield event;
          }
          // Then wait for anything newer.
          const since = new Date(newest + 1).toISOString();
          const page = await this.list({ since, limit: 100, wait: LISTEN_WAIT_SECONDS }, { signal });
          for (const event of page.data) if (accept(event)) yield event;
          failures = 0;
        } catch (error) {
          if (signal?.aborted) return;
          const transient =
            error instanceof PausepointError &&
            (error.status === undefined || error.status === 429 || error.status >= 500);
          if (!transient) throw error;
          options.onError?.(error);
          failures += 1;
          await sleep(Math.min(LISTEN_RETRY_MAX_MS, 500 * 2 ** Math.min(failures, 6)), signal);
        }
        for (const [id, at] of seen) if (at < newest - OVERLAP_MS * 2) seen.delete(id);
      }
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    }
  }

  /** Every event from `from` on, page by page. */
  private async *pagesFrom(from: number, signal: AbortSignal | undefined): AsyncGenerator<EventRecord> {
    for (;;) {
      const page = await this.list({ since: new Date(from).toISOString(), limit: 100 }, { signal });
      yield* page.data;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      // The next page starts at the last event's time (ties are skipped as seen).
      const lastAt = Date.parse(last.created_at);
      from = lastAt > from ? lastAt : from + 1;
    }
  }

  /** The service's clock, from the Date header (the client's clock when there is none). */
  private async serverNow(signal: AbortSignal | undefined): Promise<number> {
    const future = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString();
    const answer = await this.transport.request<EventsPage>({
      method: 'GET',
      path: '/v1/events',
      query: { since: future, limit: 1 },
      signal,
    });
    const date = Date.parse(answer.headers.get('date') ?? '');
    return Number.isNaN(date) ? Date.now() : date;
  }
}
