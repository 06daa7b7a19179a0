import { type Account, call, type Reply, type RequestOptions } from '../helpers/http.js';
import { tokenOf } from '../helpers/pauses.js';
import type { Cluster } from './cluster.js';
import type { Random } from './random.js';

// The clients of the chaos test: a few loops that create pauses (live and
// test, some expiring in seconds, some with timeout_default, some asking for
// email), answer them on the response endpoint and cancel them, against
// whichever instance is running. Every reply the service gave is written in
// the ledger; a request that got no reply (the instance died under it) is
// left undecided, and a create among those is retried with its Idempotency-Key.

export type Mode = 'live' | 'test';

export interface CreateRequest {
  seq: number;
  account: Account;
  mode: Mode;
  idempotencyKey: string;
  body: Record<string, unknown>;
}

interface KnownPause {
  id: string;
  account: Account;
  mode: Mode;
  token: string;
  options: string[];
  open: boolean;
}

/** What the clients were told. The final state must agree with all of it. */
export interface Ledger {
  /** Acknowledged creates (201), by client sequence number. */
  created: Map<number, { id: string; mode: Mode; email: string[] }>;
  /** Acknowledged answers (200 on POST /v1/respond/{token}). */
  answered: Array<{ pauseId: string; choice: string; responseAt: string }>;
  /** Acknowledged cancels (200 on DELETE /v1/pause/{id}). */
  cancelled: string[];
  /** Refusals that state a committed fact: 409 already_responded, 410 pause_closed, 409 pause_not_pending. */
  refused: Array<{ pauseId: string; code: 'already_responded' | 'pause_closed' | 'pause_not_pending' }>;
  /** Replies no client should ever get (a 5xx, a 400 on a well-formed call, ...). */
  unexpected: string[];
  /** Creates that got no reply and have not been acknowledged since. */
  undecidedCreates: Map<number, CreateRequest>;
  /** Calls that got no reply, by kind. */
  noReply: Record<'create' | 'answer' | 'cancel', number>;
  /** Every create the clients sent, by sequence number (for the idempotency check). */
  sent: Map<number, CreateRequest>;
}

export interface WorkloadOptions {
  cluster: Cluster;
  accounts: Account[];
  random: Random;
  /** How many client loops run concurrently. */
  clients: number;
  /** Marks this run's idempotency keys. */
  runId: string;
}

export interface Workload {
  ledger: Ledger;
  stop(): Promise<void>;
  /** Sends every undecided create again (with its Idempotency-Key) until each has a reply. */
  resolveUndecided(): Promise<void>;
}

export function startWorkload(options: WorkloadOptions): Workload {
  const ledger: Ledger = {
    created: new Map(),
    answered: [],
    cancelled: [],
    refused: [],
    unexpected: [],
    undecidedCreates: new Map(),
    noReply: { create: 0, answer: 0, cancel: 0 },
    sent: new Map(),
  };
  const known: KnownPause[] = [];
  let seq = 0;
  let stopped = false;

  /** One call to a running instance; undefined when no reply came. */
  const send = async (random: Random, method: string, path: string, init: RequestOptions = {}) => {
    const service = await options.cluster.any(random);
    return call(service.url!, method, path, init).catch(() => undefined);
  };

  const create = async (random: Random, request: CreateRequest) => {
    ledger.sent.set(request.seq, request);
    // Taken off the undecided list while under way, so no two loops send it at once.
    ledger.undecidedCreates.delete(request.seq);
    const reply = await send(random, 'POST', '/v1/pause', {
      token: request.mode === 'live' ? request.account.live : request.account.test,
      body: request.body,
      headers: { 'idempotency-key': request.idempotencyKey },
    });
    if (!reply) {
      ledger.noReply.create += 1;
      ledger.undecidedCreates.set(request.seq, request);
      return;
    }
    if (reply.status !== 201) return unexpected(`create #${request.seq}`, reply);
    const pause = reply.body;
    const email = ((request.body.notify as { email?: string[] } | undefined)?.email ?? []).slice();
    ledger.created.set(request.seq, { id: pause.id, mode: request.mode, email });
    if (!known.some((p) => p.id === pause.id)) {
      known.push({
        id: pause.id,
        account: request.account,
        mode: request.mode,
        token: tokenOf(pause),
        options: pause.options,
        open: true,
      });
    }
  };

  const answer = async (random: Random, pause: KnownPause) => {
    const choice = random.pick(pause.options);
    const reply = await send(random, 'POST', `/v1/respond/${pause.token}`, { body: { choice } });
    if (!reply) {
      ledger.noReply.answer += 1;
      return;
    }
    if (reply.status === 200) {
      pause.open = false;
      ledger.answered.push({ pauseId: pause.id, choice, responseAt: reply.body.response_at });
    } else if (!refusal(pause, reply, { 409: 'already_responded', 410: 'pause_closed' })) {
      unexpected(`answer ${pause.id}`, reply);
    }
  };

  const cancel = async (random: Random, pause: KnownPause) => {
    const token = pause.mode === 'live' ? pause.account.live : pause.account.test;
    const reply = await send(random, 'DELETE', `/v1/pause/${pause.id}`, { token });
    if (!reply) {
      ledger.noReply.cancel += 1;
      return;
    }
    if (reply.status === 200) {
      pause.open = false;
      ledger.cancelled.push(pause.id);
    } else if (!refusal(pause, reply, { 409: 'pause_not_pending' })) {
      unexpected(`cancel ${pause.id}`, reply);
    }
  };

  /** A refusal that tells the pause has left pending; false when the reply is not one. */
  const refusal = (pause: KnownPause, reply: Reply, expected: Record<number, Ledger['refused'][number]['code']>) => {
    const code = expected[reply.status];
    if (code === undefined || reply.body?.error?.code !== code) return false;
    pause.open = false;
    ledger.refused.push({ pauseId: pause.id, code });
    return true;
  };

  const unexpected = (what: string, reply: Reply) => {
    ledger.unexpected.push(`${what}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
  };

  const newCreate = (random: Random): CreateRequest => {
    seq += 1;
    const account = random.pick(options.accounts);
    const mode: Mode = random.chance(0.5) ? 'live' : 'test';
    const choices = random.pick([
      ['approve', 'reject'],
      ['red', 'green', 'blue'],
    ]);
    const body: Record<string, unknown> = {
      title: `chaos #${seq}`,
      options: choices,
      // Some expire within seconds (they time out during the run), the rest outlive it.
      expires_in: random.chance(0.4) ? random.int(1, 4) : 3600,
      metadata: { seq, run: options.runId },
    };
    if (random.chance(0.5)) body.timeout_default = random.pick(choices);
    if (random.chance(0.35)) {
      const count = random.int(1, 2);
      body.notify = { email: Array.from({ length: count }, (_, i) => `p${seq}-${mode}-${i}@example.com`) };
    }
    return { seq, account, mode, idempotencyKey: `${options.runId}-${seq}`, body };
  };

  /** A pause to act on: mostly one still believed open, sometimes any (a late or racing call). */
  const target = (random: Random): KnownPause | undefined => {
    const open = known.filter((p) => p.open);
    const from = open.length > 0 && random.chance(0.85) ? open : known;
    return from.length > 0 ? random.pick(from) : undefined;
  };

  const step = async (random: Random) => {
    const roll = random.next();
    const pause = target(random);
    if (roll < 0.08 && ledger.undecidedCreates.size > 0) {
      return create(random, random.pick([...ledger.undecidedCreates.values()]));
    }
    if (roll < 0.5 || !pause) return create(random, newCreate(random));
    if (roll < 0.78) return answer(random, pause);
    return cancel(random, pause);
  };

  const loops = Array.from({ length: options.clients }, async (_, i) => {
    const random = options.random.fork(i);
    while (!stopped) {
      await step(random);
      // A breath between calls leaves the two cores to the service.
      await new Promise((resolve) => setTimeout(resolve, random.int(0, 15)));
    }
  });

  return {
    ledger,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
    async resolveUndecided() {
      const random = options.random.fork(options.clients);
      for (let attempt = 0; attempt < 5 && ledger.undecidedCreates.size > 0; attempt++) {
        for (const request of [...ledger.undecidedCreates.values()]) await create(random, request);
      }
    },
  };
}
