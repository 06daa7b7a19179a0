import type { FastifyInstance } from 'fastify';
import { cancelOwnedPause } from '../actions/cancel-pause.js';
import type { PresentedPause } from '../actions/present-pause.js';
import { ApiError } from '../errors.js';
import { documentOf, Layout } from './layout.js';
import { findOwnedPause, notFoundPage, renderPause } from './pause.js';
import { modeOf, pauseHref } from './pauses.js';
import { type SignedIn, signedInOf } from './session.js';

// Cancelling a pause takes two steps: this page asks, its form cancels
// (through the same action as DELETE /v1/pause/{id}), then back to the pause.

function ConfirmPage({ signedIn, pause }: { signedIn: SignedIn; pause: PresentedPause }) {
  return (
    <Layout title="Cancel the pause?" signedIn={signedIn} section="pauses" narrow>
      <div class="card">
        <p class="eyebrow">Cancel the pause?</p>
        <h1>{pause.title}</h1>
        <p>
          Nobody will be able to answer it any more, and the program waiting for it is told it was cancelled. This
          cannot be undone.
        </p>
        <form method="post" action={`/console/pauses/${pause.id}/cancel`}>
          <input type="hidden" name="csrf" value={signedIn.csrf} />
          <input type="hidden" name="mode" value={pause.mode} />
          <p>
            <button type="submit" class="danger primary wide">
              Cancel the pause
            </button>
          </p>
        </form>
        <p>
          <a href={pauseHref(pause)}>No, keep it</a>
        </p>
      </div>
    </Layout>
  );
}

export function cancelPausePage(app: FastifyInstance): void {
  app.get('/pauses/:id/cancel', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const pause = await findOwnedPause(app.services, signedIn.developer.id, id, modeOf((request.query as any).mode));
    if (!pause) return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(signedIn));
    if (pause.status !== 'pending') return reply.redirect(pauseHref(pause), 303);
    return reply.type('text/html; charset=utf-8').send(documentOf(<ConfirmPage signedIn={signedIn} pause={pause} />));
  });

  app.post('/pauses/:id/cancel', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const { id } = request.params as { id: string };
    const mode = modeOf((request.body as Record<string, unknown> | undefined)?.mode);
    const owner = { developerId: signedIn.developer.id, mode };
    try {
      const cancelled = await cancelOwnedPause(app.services, owner, id);
      return reply.redirect(`${pauseHref(cancelled)}${cancelled.mode === 'test' ? '&' : '?'}cancelled=1`, 303);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'not_found') {
        return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(signedIn));
      }
      const pause = await findOwnedPause(app.services, owner.developerId, id, mode);
      if (!pause) return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(signedIn));
      return reply
        .code(error.status)
        .type('text/html; charset=utf-8')
        .send(await renderPause(app.services, signedIn, pause, { error: error.message }));
    }
  });
}
