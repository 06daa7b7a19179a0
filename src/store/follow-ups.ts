import type { Kysely } from 'kysely';
import { type Clock, isoTime } from '../domain/clock.js';
import type { Pause } from '../domain/pause.js';
import { decodePause } from './decode.js';
import { PENDING } from './literals.js';
import type { Database, ReviewersTable } from './schema.js';
import type { Store } from './store.js';

// Reminders and escalations of pauses with reviewers. No timer in memory:
// each pause holds when its next reminder (remind_at) and its escalation
// (escalate_at) fall due, both indexed, and a worker takes the due ones as
// the expirer takes due pauses. Taking one moves or clears its column in the
// transaction that writes what it sends, so a restart loses none and two
// workers never both take it.

export type FollowUp = 'remind' | 'escalate';
const COLUMN = { remind: 'remind_at', escalate: 'escalate_at' } as const;

/** Pauses whose reminder (or escalation) is due, the longest due first. */
export async function dueFollowUps(
  store: Store,
  kind: FollowUp,
  input: { now: string; limit: number },
): Promise<Array<{ id: string; dueAt: string }>> {
  const column = COLUMN[kind];
  const rows = await store.db
    .selectFrom('pauses')
    .select(['id', `${column} as dueAt`])
    .where(column, 'is not', null)
    .where(column, '<=', input.now)
    .orderBy(column)
    .limit(input.limit)
    .execute();
  return rows.map((row) => ({ id: row.id, dueAt: row.dueAt as string }));
}

/** When the next reminder or escalation falls due, if any. */
export async function nextFollowUp(store: Store): Promise<string | null> {
  const next = await Promise.all(
    Object.values(COLUMN).map((column) =>
      store.db
        .selectFrom('pauses')
        .select((eb) => eb.fn.min(column).as('next'))
        .where(column, 'is not', null)
        .executeTakeFirst(),
    ),
  );
  const times = next.map((row) => row?.next as string | null | undefined).filter((at): at is string => !!at);
  return times.length === 0 ? null : times.sort()[0]!;
}

/**
 * Takes a due follow-up of a pause: only if it is still the one seen due and
 * the pause still waits; else clears it (a decided pause needs none). The
 * pause row is locked on PostgreSQL, so a vote deciding it waits, or wins.
 */
async function take(
  trx: Kysely<Database>,
  dialect: Store['dialect'],
  kind: FollowUp,
  input: DueFollowUp,
): Promise<{ pause: Pause; now: string } | null> {
  const column = COLUMN[kind];
  let read = trx.selectFrom('pauses').selectAll().where('id', '=', input.pauseId);
  if (dialect === 'postgres') read = read.forUpdate();
  const row = await read.executeTakeFirst();
  // Read once the pause is locked: what is sent then is timed after any vote
  // or cancel it queued behind (as castVote does).
  const now = isoTime(input.clock.now());
  if (!row || row[column] !== input.dueAt) return null;
  if (row.status !== 'pending' || row.expires_at <= now) {
    await trx
      .updateTable('pauses')
      .set({ [column]: null })
      .where('id', '=', row.id)
      .execute();
    return null;
  }
  return { pause: decodePause(row), now };
}

/** A follow-up seen due: the pause, when it fell due, and the clock to time what it sends. */
export interface DueFollowUp {
  pauseId: string;
  dueAt: string;
  clock: Clock;
}

/**
 * Takes a due reminder: counts it and moves remind_at to the next one (or
 * clears it after the last, or when the next would come after the expiry).
 * The next is remind_every after this one was due, so the schedule does not
 * drift; but when that has passed too (no worker ran for longer than
 * remind_every), remind_every from now: reminders missed meanwhile are not
 * sent in a burst. Returns the pause and whom to remind: the reviewers who
 * have not voted and were asked before it fell due (one added by an
 * escalation taken at the same time, or later, has just been sent the
 * question; their first reminder is the next one).
 */
export async function takeReminder(
  store: Store,
  input: DueFollowUp,
  trx: Kysely<Database>,
): Promise<{ pause: Pause; now: string; waitingFor: ReviewersTable[]; reviewerCount: number } | null> {
  const taken = await take(trx, store.dialect, 'remind', input);
  if (!taken) return null;
  const { pause } = taken;
  const sent = (pause.remindersSent ?? 0) + 1;
  const every = (pause.remindEvery ?? 0) * 1000;
  const onSchedule = Date.parse(input.dueAt) + every;
  const now = Date.parse(taken.now);
  const next = isoTime(new Date(onSchedule > now ? onSchedule : now + every));
  const remindAt = sent < (pause.remindMax ?? 0) && next < pause.expiresAt ? next : null;
  await trx
    .updateTable('pauses')
    .set({ reminders_sent: sent, remind_at: remindAt })
    .where('id', '=', pause.id)
    .execute();
  const reviewers = await trx
    .selectFrom('reviewers')
    .selectAll()
    .where('pause_id', '=', pause.id)
    .orderBy('position')
    .execute();
  return {
    pause,
    now: taken.now,
    waitingFor: reviewers.filter((reviewer) => reviewer.voted_at === null && reviewer.added_at <= input.dueAt),
    reviewerCount: reviewers.length,
  };
}

/** Takes a due escalation: marks the pause escalated. Returns it and the emails of its current reviewers. */
export async function takeEscalation(
  store: Store,
  input: DueFollowUp,
  trx: Kysely<Database>,
): Promise<{ pause: Pause; now: string; reviewerEmails: string[] } | null> {
  const taken = await take(trx, store.dialect, 'escalate', input);
  if (!taken) return null;
  const { pause, now } = taken;
  const escalated = await trx
    .updateTable('pauses')
    .set({ escalate_at: null, escalated_at: now })
    .where('id', '=', pause.id)
    .where('status', '=', PENDING)
    .returningAll()
    .executeTakeFirstOrThrow();
  const reviewers = await trx.selectFrom('reviewers').select('email').where('pause_id', '=', pause.id).execute();
  return { pause: decodePause(escalated), now, reviewerEmails: reviewers.map((reviewer) => reviewer.email) };
}
