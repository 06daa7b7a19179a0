import { type Kysely, sql, type Transaction } from 'kysely';
import { type Clock, isoTime } from '../domain/clock.js';
import {
  type Decision,
  type EventType,
  eventPayload,
  type OutcomeEventType,
  type PauseForEvent,
  type Vote,
  votedPayload,
} from '../domain/events.js';
import { newId } from '../domain/ids.js';
import type { Mode } from '../domain/keys.js';
import { answerProblems, answerValues, type Pause, type SlackResponder, usesSlackApp } from '../domain/pause.js';
import type { FieldProblem } from '../domain/problems.js';
import { decides } from '../domain/votes.js';
import { decodeEventSource, decodePause, decodeReach, encodeSlackResponder } from './decode.js';
import { fanOut } from './deliveries.js';
import { PENDING } from './literals.js';
import { getPause } from './pauses.js';
import { prepared } from './prepared.js';
import { getReviewer, voteOf } from './reviewers.js';
import type { Database, EventsTable } from './schema.js';
import { queueSlackUpdates } from './slack.js';
import type { Dialect, Store } from './store.js';
import { announcePausesChanged, announceWorkQueued } from './wake-ups.js';

// Every way a pause leaves `pending`, in one place. Each is a conditional
// update (`WHERE status = 'pending'` plus the expiry rule) in a transaction
// that also writes the event to the outbox, so exactly one outcome wins and
// it has exactly one event. Whoever loses gets null and decides the error.
// A reviewer's vote is here too: the vote that decides is such a transition.

/** A pause that changed; its waiters and the workers are woken once it commits (recordEvents). */
export interface Transition<P = Pause> {
  pause: P;
}

/**
 * What a pause's event is written from: its owner, the fields its payload
 * carries, and where its question went (usesSlackApp: its Slack messages).
 */
type EventSource = PauseForEvent & Pick<Pause, 'mode' | 'notify' | 'deliver'>;

interface RecordOptions<P> {
  payloadOf?: (pause: P) => string;
  /** false: the caller found, in this same transaction, that the owner has no webhook at all; none is looked for. */
  webhooks?: boolean;
}

/**
 * Writes the events of these transitions and their webhook deliveries (the
 * outbox), and announces them: the pauses' waiters, and the workers when a
 * delivery was queued, wake once this commits, on every instance.
 */
async function recordEvents<P extends EventSource>(
  store: Store,
  type: EventType,
  pauses: P[],
  now: string,
  trx: Transaction<Database>,
  options: RecordOptions<P> = {},
): Promise<void> {
  if (pauses.length === 0) return;
  const { payloadOf = (pause: P) => eventPayload(type as OutcomeEventType, pause, now), webhooks = true } = options;
  const events: EventsTable[] = pauses.map((pause) => ({
    id: newId('evt'),
    pause_id: pause.id,
    developer_id: pause.developerId,
    mode: pause.mode,
    type,
    payload: payloadOf(pause),
    created_at: now,
  }));
  if (events.length === 1) await insertEvent(store, events[0]!, trx);
  else await trx.insertInto('events').values(events).execute();
  const queued = webhooks && (await fanOut(store, events, trx)) > 0;
  // An outcome updates the pause's Slack messages (a vote alone does not).
  if (type !== 'pause.voted') {
    const withSlack = pauses.filter(usesSlackApp).map((pause) => pause.id);
    await queueSlackUpdates(store, withSlack, now, trx);
  }
  await announcePausesChanged(
    store,
    pauses.map((pause) => pause.id),
    trx,
  );
  if (queued) await announceWorkQueued(store, trx);
}

/** One event: every answer, cancel and vote writes one; the expirer writes many at once. */
const insertEvent = prepared((db, event: EventsTable) =>
  db.insertInto('events').values({
    id: event.id,
    pause_id: event.pause_id,
    developer_id: event.developer_id,
    mode: event.mode,
    type: event.type,
    payload: event.payload,
    created_at: event.created_at,
  }),
);

type Answer = {
  pauseId: string;
  choice: string;
  text: string | null;
  /** The values sent (JSON), already checked against the pause's form; null when none were sent. */
  values: string | null;
  /** 1 when the values sent differ from the proposed ones. */
  edited: number;
  now: string;
  /** Who answered from Slack buttons, when it was there. */
  respondedBySlack?: SlackResponder | null;
};

/** An answer as its row is written: who answered from Slack, encoded (decode.ts). */
type AnswerRow = Omit<Answer, 'respondedBySlack'> & { respondedBySlack: string | null };

type ListColumn = 'options' | 'form_on' | 'require_text';

/**
 * Whether the choice is in a column holding a JSON array of strings (false
 * when the column is null): the one condition here in each engine's own SQL.
 */
const inList = {
  sqlite: (column: ListColumn, choice: string) =>
    sql<boolean>`exists (select 1 from json_each(${sql.ref(column)}) where value = ${choice})`,
  postgres: (column: ListColumn, choice: string) =>
    sql<boolean>`coalesce(${sql.ref(column)}::jsonb ? ${choice}, false)`,
} satisfies Record<Dialect, unknown>;

const markResponded = (dialect: Dialect) =>
  prepared((db, input: AnswerRow) => {
    const submitsForm = inList[dialect]('form_on', input.choice);
    const valuesSent = sql<boolean>`cast(${input.values} as text) is not null`;
    return (
      db
        .updateTable('pauses')
        .set({
          status: 'responded',
          response_choice: input.choice,
          response_text: input.text,
          response_at: input.now,
          updated_at: input.now,
          responded_by_slack: input.respondedBySlack ?? null,
          // A choice that submits the form records the values sent, or else the proposed ones.
          response_values: sql<
            string | null
          >`case when ${submitsForm} then coalesce(cast(${input.values} as text), ${sql.ref('form_values')}) else null end`,
          response_edited: sql<
            number | null
          >`case when ${sql.ref('form_on')} is null then null else cast(${input.edited} as integer) end`,
        })
        .where('id', '=', input.pauseId)
        .where('status', '=', PENDING)
        .where('expires_at', '>', input.now)
        // An answer that does not fit the question changes nothing: values
        // sent were checked against the form by the caller, which read it.
        .where('quorum', 'is', null)
        .where(inList[dialect]('options', input.choice))
        .where(sql<boolean>`(cast(${input.text} as text) is null or ${sql.ref('allow_text')} = 1)`)
        .where(
          sql<boolean>`(cast(${input.text} as text) is not null or not ${inList[dialect]('require_text', input.choice)})`,
        )
        .where(
          sql<boolean>`((${submitsForm} and (${valuesSent} or ${sql.ref('form_values')} is not null)) or (not ${submitsForm} and not ${valuesSent}))`,
        )
        // Only what the event needs: each column returned is a value to convert, and a pause has 34.
        .returning([
          'id',
          'developer_id',
          'mode',
          'metadata',
          'response_choice',
          'response_text',
          'response_at',
          'response_values',
          'response_edited',
          'expires_at',
          // Whether the Slack app may have messages about it to update (usesSlackApp).
          'notify',
          'deliver',
          // Whether fanOut need look for webhooks: read here, in the same statement, it saves one.
          sql<number | boolean>`exists (select 1 from webhooks where webhooks.developer_id = pauses.developer_id)`.as(
            'has_webhooks',
          ),
        ])
    );
  });
const markRespondedIn = { sqlite: markResponded('sqlite'), postgres: markResponded('postgres') };

/**
 * An answer on a pause's shared link. It loses to any earlier outcome and to
 * expires_at, and changes nothing on a pause with reviewers or unless it fits
 * the question (one of the options; text only where allowed, and where a reason is
 * required; the proposed values of a form), so the pause
 * need not be read first: the caller reads it only to say why nothing changed.
 */
export async function respondToPause(store: Store, input: Answer): Promise<Transition<EventSource> | null> {
  return store.write(async (trx) => {
    const [row] = await markRespondedIn[store.dialect](
      store,
      { ...input, respondedBySlack: encodeSlackResponder(input.respondedBySlack ?? null) },
      trx,
    );
    if (!row) return null;
    const pause = { ...decodeEventSource(row), ...decodeReach(row) };
    // An answer from a channel's Slack buttons names who gave it.
    const slackAnswer = input.respondedBySlack ? { responded_by: input.respondedBySlack } : undefined;
    await recordEvents(store, 'pause.responded', [pause], input.now, trx, {
      payloadOf: (source) => eventPayload('pause.responded', source, input.now, slackAnswer),
      webhooks: Boolean(row.has_webhooks),
    });
    return { pause };
  });
}

const markCancelled = prepared((db, input: { pauseId: string; developerId: string; mode: Mode; now: string }) =>
  db
    .updateTable('pauses')
    .set({ status: 'cancelled', updated_at: input.now, remind_at: null, escalate_at: null })
    .where('id', '=', input.pauseId)
    .where('developer_id', '=', input.developerId)
    .where('mode', '=', input.mode)
    .where('status', '=', PENDING)
    .where('expires_at', '>', input.now)
    .returningAll(),
);

/**
 * The developer's cancel; loses to any earlier outcome and to expires_at. As
 * for a vote, the time is read once the pause is locked (on PostgreSQL), so
 * a vote counted while the cancel waited is not later than the cancel.
 */
export async function cancelPause(
  store: Store,
  input: { pauseId: string; developerId: string; mode: Mode; clock: Clock },
): Promise<Transition | null> {
  const { pauseId, developerId, mode } = input;
  return store.write(async (trx) => {
    if (store.dialect === 'postgres') {
      await trx
        .selectFrom('pauses')
        .select('id')
        .where('id', '=', pauseId)
        .where('developer_id', '=', developerId)
        .where('mode', '=', mode)
        .forUpdate()
        .execute();
    }
    const now = isoTime(input.clock.now());
    const [row] = await markCancelled(store, { pauseId, developerId, mode, now }, trx);
    if (!row) return null;
    const pause = decodePause(row);
    await recordEvents(store, 'pause.cancelled', [pause], now, trx);
    return { pause };
  });
}

/**
 * Times out up to `limit` pending pauses whose expires_at has passed, with
 * timeout_default (or null) as the choice and expires_at as response_at. On
 * PostgreSQL rows another instance is already expiring are skipped.
 */
export async function expireDuePauses(store: Store, input: { now: string; limit: number }): Promise<Pause[]> {
  return store.write(async (trx) => {
    let due = trx
      .selectFrom('pauses')
      .select('id')
      .where('status', '=', PENDING)
      .where('expires_at', '<=', input.now)
      .orderBy('expires_at')
      .limit(input.limit);
    if (store.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const expired = await trx
      .updateTable('pauses')
      .set((eb) => ({
        status: 'timed_out',
        response_choice: eb.ref('timeout_default'),
        response_text: null,
        response_at: eb.ref('expires_at'),
        updated_at: input.now,
        remind_at: null,
        escalate_at: null,
      }))
      .where('id', 'in', due)
      .where('status', '=', PENDING)
      .returningAll()
      .execute()
      .then((rows) => rows.map(decodePause));
    await recordEvents(store, 'pause.timed_out', expired, input.now, trx);
    return expired;
  });
}

export type VoteResult =
  | { kind: 'counted'; pause: Pause; vote: Vote; votesSoFar: number; decided: boolean }
  | { kind: 'not_found' | 'already_voted' | 'already_responded' | 'closed' }
  | { kind: 'invalid'; problems: FieldProblem[] };

/**
 * A reviewer's vote: counted once per reviewer, and when it decides (a veto
 * option, or the quorum reached) the pause is responded in the same
 * transaction, with its one pause.responded event. Every vote also writes a
 * pause.voted event.
 *
 * The pause row is read first with a lock on PostgreSQL, so concurrent votes
 * (and a cancel) on one pause queue here and each counts every vote committed
 * before it; SQLite runs one write transaction at a time anyway.
 *
 * It is the only read of the pause a vote needs: the vote is checked against
 * the question here, before anything is written. The refusals come in the
 * order they always had: no such pause or reviewer (not_found), an answer
 * that does not fit (invalid), then the pause's state and the reviewer's own
 * vote. The reviewer is read only for a refusal; a vote that counts updates
 * their row and so finds it.
 */
export async function castVote(
  store: Store,
  input: { pauseId: string; reviewerId: string; choice: string; text: string | null; values?: unknown; clock: Clock },
): Promise<VoteResult> {
  const { pauseId, reviewerId } = input;
  return store.write(async (trx): Promise<VoteResult> => {
    const pause =
      store.dialect === 'postgres'
        ? (await lockPause(store, { pauseId }, trx)).map(decodePause)[0]
        : await getPause(store, pauseId, trx);
    if (!pause || pause.quorum === null) return { kind: 'not_found' };
    /** A refusal, unless the token names no reviewer of this pause. */
    const refuse = async (refusal: VoteResult): Promise<VoteResult> =>
      (await getReviewer(store, { pauseId, reviewerId }, trx)) ? refusal : { kind: 'not_found' };
    const problems = answerProblems(pause, input);
    if (problems.length > 0) return refuse({ kind: 'invalid', problems });
    const { values, edited } = answerValues(pause, input);
    // The time is read once the pause is locked, not before the wait: so the
    // votes' times follow the order they are counted in, and no vote counts
    // after the outcome or the expiry it queued behind.
    const now = isoTime(input.clock.now());
    if (pause.status === 'responded') return refuse({ kind: 'already_responded' });
    if (pause.status !== 'pending' || pause.expiresAt <= now) return refuse({ kind: 'closed' });
    const statement: VoteStatement = {
      pauseId,
      reviewerId,
      choice: input.choice,
      text: input.text,
      values: values === null ? null : JSON.stringify(values),
      edited: pause.form === null ? null : edited ? 1 : 0,
      now,
    };
    const [voted] = await recordVote(store, statement, trx);
    if (!voted) return refuse({ kind: 'already_voted' });
    const votes = (await votesOf(store, { pauseId }, trx)).map((row) => voteOf(row) as Vote);
    const vote = voteOf(voted) as Vote;
    const rules = { quorum: pause.quorum, veto: pause.veto };
    const decided = decides(rules, input.choice, votes.filter((counted) => counted.choice === input.choice).length);
    const reviewer = { id: voted.id, email: voted.email, name: voted.name };
    await recordEvents(store, 'pause.voted', [pause], now, trx, {
      payloadOf: () => votedPayload(pause, reviewer, vote, votes.length),
    });
    if (!decided) return { kind: 'counted', pause, vote, votesSoFar: votes.length, decided };

    const [decidedRow] = await markDecided(store, statement, trx);
    if (!decidedRow) throw new Error(`pause ${pauseId} was read pending in this transaction, yet not updated`);
    const responded = decodePause(decidedRow);
    const decision: Decision = { responded_by: reviewer, votes };
    await recordEvents(store, 'pause.responded', [responded], now, trx, {
      payloadOf: (row) => eventPayload('pause.responded', row, now, decision),
    });
    return { kind: 'counted', pause: responded, vote, votesSoFar: votes.length, decided };
  });
}

// The statements of a vote, each prepared once (a vote runs three or four).

/** PostgreSQL only: the pause row, locked until the transaction ends. */
const lockPause = prepared((db, input: { pauseId: string }) =>
  db.selectFrom('pauses').selectAll().where('id', '=', input.pauseId).forUpdate(),
);

type VoteStatement = {
  pauseId: string;
  reviewerId: string;
  choice: string;
  text: string | null;
  /** The vote's values (JSON), null unless its choice submits the form. */
  values: string | null;
  edited: number | null;
  now: string;
};

const recordVote = prepared((db, input: VoteStatement) =>
  db
    .updateTable('reviewers')
    .set({ vote_choice: input.choice, vote_text: input.text, vote_values: input.values, voted_at: input.now })
    .where('id', '=', input.reviewerId)
    .where('pause_id', '=', input.pauseId)
    .where('voted_at', 'is', null)
    .returningAll(),
);

/** Every vote cast on a pause, in the order they were cast. */
const votesOf = prepared((db, input: { pauseId: string }) =>
  db
    .selectFrom('reviewers')
    .selectAll()
    .where('pause_id', '=', input.pauseId)
    .where('voted_at', 'is not', null)
    .orderBy('voted_at')
    .orderBy('id'),
);

const markDecided = prepared((db, input: VoteStatement) =>
  db
    .updateTable('pauses')
    .set({
      status: 'responded',
      response_choice: input.choice,
      response_text: input.text,
      response_values: input.values,
      response_edited: input.edited,
      response_at: input.now,
      responded_by: input.reviewerId,
      updated_at: input.now,
      remind_at: null,
      escalate_at: null,
    })
    .where('id', '=', input.pauseId)
    .where('status', '=', PENDING)
    .returningAll(),
);

/** When the next pending pause falls due, if any. */
export async function nextExpiry(store: Store, trx: Kysely<Database> = store.db): Promise<string | null> {
  const row = await trx
    .selectFrom('pauses')
    .select((eb) => eb.fn.min('expires_at').as('next'))
    .where('status', '=', PENDING)
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}
