import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { sha256Hex } from '../domain/crypto.js';
import { normaliseEmail } from '../domain/email.js';
import { reviewerToken } from '../domain/response-token.js';
import { ApiError } from '../errors.js';
import { renderInboxLinkEmail } from '../messages/render.js';
import { deleteSession } from '../store/console-sessions.js';
import {
  type CastVote,
  consumeInboxLink,
  createInboxLink,
  createInboxSession,
  findInboxSession,
  findUsableInboxLink,
  type InboxSession,
  isLiveReviewer,
  reviewerByEmail,
  votesOfReviewer,
  waitingForReviewer,
} from '../store/inbox.js';
import {
  type AnswerResult,
  type PostedAnswer,
  type Question,
  questionFor,
  submitPostedAnswer,
} from './answer-pause.js';
import { CONSOLE_SESSION_IDLE_MS, keepAlive } from './console-sessions.js';

// The reviewers' inbox: a reviewer signs in with a single-use link emailed to
// them, then sees the live pauses that still wait for their vote and answers
// them through the same action as their personal link (submitAnswer), plus
// the votes they cast.

export const INBOX_LINK_MS = 15 * 60 * 1000;
/** The same idle expiry as the console's sessions. */
export const INBOX_SESSION_IDLE_MS = CONSOLE_SESSION_IDLE_MS;
/** How many waiting questions and past votes one page lists. */
export const INBOX_LIMIT = 100;

type LinkServices = Pick<ServiceContext, 'store' | 'clock' | 'mailer' | 'publicBaseUrl' | 'logger'>;

/**
 * Emails a sign-in link to an address that a live pause names as a reviewer,
 * when email is configured; nothing for any other address. All of it happens
 * after this returns, so the caller answers the same, in the same time,
 * whatever the address.
 */
export function requestInboxLink(services: LinkServices, rawEmail: string): void {
  sendInboxLink(services, normaliseEmail(rawEmail)).catch((error: unknown) =>
    services.logger.error({ err: error }, 'inbox link could not be sent'),
  );
}

async function sendInboxLink(services: LinkServices, email: string): Promise<void> {
  const { mailer, store } = services;
  if (!mailer || !(await isLiveReviewer(store, email))) return;
  const now = services.clock.now();
  const expiresAt = isoTime(new Date(now.getTime() + INBOX_LINK_MS));
  const token = await createInboxLink(store, { email, now: isoTime(now), expiresAt });
  const message = renderInboxLinkEmail({ linkUrl: `${services.publicBaseUrl}/inbox/link/${token}`, expiresAt });
  const sent = await mailer.send(email, message);
  if (!sent.ok) services.logger.warn({ status_code: sent.statusCode, error: sent.error }, 'inbox link email failed');
}

/** Whether a link would still sign someone in; looking uses nothing up (mail scanners open links). */
export async function inboxLinkIsUsable(services: Pick<ServiceContext, 'store' | 'clock'>, token: string) {
  return (await findUsableInboxLink(services.store, sha256Hex(token), isoTime(services.clock.now()))) !== undefined;
}

/**
 * Signs in with a link: uses it up (once only, even for two requests at the
 * same moment) and starts a session for its address. The session the
 * browser came with, if any, ends. Undefined for a used, expired or unknown link.
 */
export async function signInWithLink(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  token: string,
  previous: InboxSession | undefined,
): Promise<{ token: string; session: InboxSession } | undefined> {
  const now = services.clock.now();
  const email = await consumeInboxLink(services.store, sha256Hex(token), isoTime(now));
  if (email === undefined) return undefined;
  if (previous) await deleteSession(services.store, 'inbox_sessions', previous.id);
  return createInboxSession(services.store, {
    email,
    now: isoTime(now),
    expiresAt: isoTime(new Date(now.getTime() + INBOX_SESSION_IDLE_MS)),
  });
}

/** The live session of this cookie token; its idle expiry moves on at most once a minute. */
export async function resumeInboxSession(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  token: string,
): Promise<{ session: InboxSession } | undefined> {
  const session = await findInboxSession(services.store, sha256Hex(token), isoTime(services.clock.now()));
  return session && { session: await keepAlive(services, 'inbox_sessions', session) };
}

/** Ends the session everywhere. */
export const endInboxSession = (services: Pick<ServiceContext, 'store'>, session: InboxSession) =>
  deleteSession(services.store, 'inbox_sessions', session.id);

export interface WaitingQuestion {
  pauseId: string;
  question: Question;
  /**
   * Who asked (the developer account's email) and when: the inbox is for named
   * reviewers, signed in, so it may say; the response page never does.
   */
  askedBy: string;
  createdAt: string;
}

/** What a reviewer's inbox shows: the questions waiting for their vote, and their votes. */
export async function inboxOf(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  email: string,
): Promise<{ waiting: WaitingQuestion[]; votes: CastVote[] }> {
  const { store } = services;
  const [rows, votes] = await Promise.all([
    waitingForReviewer(store, { email, now: isoTime(services.clock.now()), limit: INBOX_LIMIT }),
    votesOfReviewer(store, { email, limit: INBOX_LIMIT }),
  ]);
  const waiting = await Promise.all(
    rows.map(async (row) => ({
      pauseId: row.pause.id,
      question: await questionFor(services, row),
      askedBy: row.askedBy,
      createdAt: row.pause.createdAt,
    })),
  );
  return { waiting, votes };
}

/**
 * The reviewer's vote on a pause, cast exactly as through their personal link
 * (the same token, the same submitPostedAnswer and its rules). A pause that does
 * not name this address (or is not live) is a 404.
 */
export async function voteFromInbox(
  services: Pick<ServiceContext, 'keys' | 'store' | 'clock'>,
  email: string,
  pauseId: string,
  answer: PostedAnswer,
): Promise<AnswerResult> {
  const reviewer = await reviewerByEmail(services.store, { pauseId, email });
  if (!reviewer) throw new ApiError('not_found', 'This question is not in your inbox.');
  return submitPostedAnswer(
    services,
    reviewerToken(services.keys.respondToken, reviewer.pause_id, reviewer.id),
    answer,
  );
}
