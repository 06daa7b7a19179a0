import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { isOverdue } from '../domain/pause.js';
import { ApiError, notFound } from '../errors.js';
import { getOwnedPause, type Owner } from '../store/pauses.js';
import { cancelPause } from '../store/transitions.js';
import { type PresentedPause, presentStoredPauses } from './present-pause.js';

/** Cancels the owner's pending pause and returns it; says why when it cannot (404, or 409 with its status). */
export async function cancelOwnedPause(
  services: Pick<ServiceContext, 'store' | 'clock' | 'keys' | 'publicBaseUrl'>,
  owner: Owner,
  pauseId: string,
): Promise<PresentedPause> {
  const { store, clock } = services;
  const cancel = await cancelPause(store, { pauseId, ...owner, clock });
  if (cancel) {
    const cancelled = cancel.pause;
    const [presented] = await presentStoredPauses(services, [cancelled]);
    return presented as PresentedPause;
  }
  const existing = await getOwnedPause(store, owner, pauseId);
  if (!existing) throw notFound('Pause');
  // Still stored as pending but past expires_at: its timeout is being recorded.
  const status = isOverdue(existing, isoTime(clock.now())) ? 'timed_out' : existing.status;
  throw new ApiError('pause_not_pending', `The pause is already ${status.replace('_', ' ')}.`, { status });
}
