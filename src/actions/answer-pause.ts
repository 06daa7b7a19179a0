import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { currentOutcome, MAX_TEXT_LENGTH, type PauseView } from '../domain/pause.js';
import { verifyResponseToken } from '../domain/response-token.js';
import { ApiError, invalidField } from '../errors.js';
import { getPause } from '../store/pauses.js';
import type { PausesTable } from '../store/schema.js';
import { respondToPause } from '../store/transitions.js';

// What the human sees and does, shared by the JSON API (/v1/respond/{token})
// and the HTML page (/r/{token}). Only the question is ever shown: never
// metadata, notify targets or anything about the developer.

export interface Question extends PauseView {
  title: string;
  body: string | null;
  options: string[];
  allow_text: boolean;
  expires_at: string;
}

const badToken = () => new ApiError('not_found', 'This response link is not valid.');

/** The pause a token addresses; undefined for any token that is not genuine. */
export async function findPauseForToken(
  services: Pick<ServiceContext, 'keys' | 'store'>,
  token: string,
): Promise<PausesTable | undefined> {
  const pauseId = verifyResponseToken(services.keys.respondToken, token);
  return pauseId ? await getPause(services.store, pauseId) : undefined;
}

/** The pause a token addresses; any token that is not genuine is a 404. */
export async function pauseForToken(
  services: Pick<ServiceContext, 'keys' | 'store'>,
  token: string,
): Promise<PausesTable> {
  const pause = await findPauseForToken(services, token);
  if (!pause) throw badToken();
  return pause;
}

export function questionOf(pause: PausesTable): Question {
  return {
    title: pause.title,
    body: pause.body,
    options: JSON.parse(pause.options),
    allow_text: pause.allow_text === 1,
    expires_at: pause.expires_at,
    ...currentOutcome(pause),
  };
}

/** Records the human's answer, or says exactly why it cannot be recorded. */
export async function submitAnswer(
  services: Pick<ServiceContext, 'store' | 'clock' | 'signals'>,
  pause: PausesTable,
  answer: { choice: string; text?: string | null },
): Promise<{ choice: string; text: string | null; response_at: string }> {
  const question = questionOf(pause);
  if (!question.options.includes(answer.choice)) throw invalidField('choice', 'must be one of the options');
  const text = answer.text === undefined || answer.text === '' ? null : answer.text;
  if (text !== null && !question.allow_text) throw invalidField('text', 'is not accepted for this pause');
  if (text !== null && text.length > MAX_TEXT_LENGTH)
    throw invalidField('text', `must be at most ${MAX_TEXT_LENGTH.toLocaleString('en-US')} characters`);

  const { store, clock, signals } = services;
  const now = isoTime(clock.now());
  const responded = await respondToPause(store, { pauseId: pause.id, choice: answer.choice, text, now });
  if (responded) {
    signals.changed([pause.id], { queued: responded.queued });
    return { choice: answer.choice, text, response_at: now };
  }
  const current = await getPause(store, pause.id);
  if (current?.status === 'responded') throw new ApiError('already_responded', 'This pause has already been answered.');
  throw new ApiError('pause_closed', 'This pause has expired or was cancelled; it no longer takes answers.');
}
