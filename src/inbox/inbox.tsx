import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { raw } from 'hono/html';
import { endInboxSession, inboxOf, voteFromInbox } from '../actions/inbox.js';
import { looksLikePauseId } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import type { CastVote } from '../store/inbox.js';
import { renderVoteForm } from '../web/page.js';
import { pageMessage } from '../web/routes.js';
import { documentOf, InboxLayout, type InboxSignedIn } from './layout.js';
import { inboxCookie, inboxSessions } from './session.js';

// A signed-in reviewer's inbox: the live questions that wait for their vote
// (soonest deadline first), each with the same vote form as their personal
// page and voted through the same action; then the votes they cast.

const html = (reply: FastifyReply) => reply.type('text/html; charset=utf-8');
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

function outcomeOf(vote: CastVote): string {
  switch (vote.status) {
    case 'pending':
      return 'Waiting for the other reviewers';
    case 'responded':
      return `Decided: ${vote.response_choice ?? ''}`;
    case 'timed_out':
      return vote.response_choice ? `Expired (default: ${vote.response_choice})` : 'Expired';
    case 'cancelled':
      return 'Cancelled';
  }
}

function VotesTable({ votes }: { votes: CastVote[] }) {
  if (votes.length === 0) return <p class="empty">You have not voted on anything yet.</p>;
  return (
    // Scrolls sideways on a narrow screen: focusable, so the keyboard can scroll it too.
    <section class="table-wrap" tabindex={0} aria-label="Your votes">
      <table>
        <caption>Your votes, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Question</th>
            <th scope="col">Your vote</th>
            <th scope="col">When</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {votes.map((vote) => (
            <tr>
              <th scope="row">{vote.title}</th>
              <td>{vote.choice}</td>
              <td>
                <time datetime={vote.voted_at}>{utc(vote.voted_at)}</time>
              </td>
              <td>{outcomeOf(vote)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

async function renderInbox(
  app: FastifyInstance,
  signedIn: InboxSignedIn,
  notice: { voted?: boolean; error?: string } = {},
): Promise<string> {
  const { waiting, votes } = await inboxOf(app.services, signedIn.session.email);
  const now = app.services.clock.now();
  return documentOf(
    <InboxLayout title="Your inbox" signedIn={signedIn}>
      <h1>Your inbox</h1>
      {notice.voted && (
        <p class="notice ok" role="status">
          Thank you — your vote has been recorded.
        </p>
      )}
      {notice.error && (
        <p class="notice error" role="alert">
          {notice.error}
        </p>
      )}
      <section aria-labelledby="waiting">
        <h2 id="waiting">{`Waiting for your vote (${waiting.length})`}</h2>
        {waiting.length === 0 ? (
          <p class="empty">Nothing is waiting for your vote.</p>
        ) : (
          <div class="stack">
            {waiting.map(({ pauseId, question }, index) => (
              <article class="card" aria-labelledby={`q-${index}`}>
                <h3 id={`q-${index}`}>{question.title}</h3>
                {question.body && <p class="details">{question.body}</p>}
                {question.quorum &&
                  raw(
                    renderVoteForm({ question, action: `/inbox/vote/${pauseId}`, now }, question.quorum, {
                      idSuffix: `-${index}`,
                      hidden: { csrf: signedIn.csrf },
                    }),
                  )}
              </article>
            ))}
          </div>
        )}
      </section>
      <section aria-labelledby="history">
        <h2 id="history">Your votes</h2>
        <VotesTable votes={votes} />
      </section>
    </InboxLayout>,
  );
}

const signedInFor = (request: FastifyRequest): InboxSignedIn => {
  const signedIn = inboxSessions.signedInOf(request);
  // The page guard sends anyone without a session elsewhere first.
  if (!signedIn) throw new Error('inbox route reached without a session');
  return signedIn;
};

export function inboxPage(app: FastifyInstance): void {
  app.get('/', { config: { inbox: 'signed-in' } }, async (request, reply) => {
    const voted = (request.query as Record<string, unknown>).voted === '1';
    return html(reply).send(await renderInbox(app, signedInFor(request), { voted }));
  });

  app.post('/vote/:pauseId', { config: { inbox: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInFor(request);
    const { pauseId } = request.params as { pauseId: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const { choice, text } = body;
    const refuse = async (status: number, error: string) =>
      html(reply)
        .code(status)
        .send(await renderInbox(app, signedIn, { error }));
    if (!looksLikePauseId(pauseId)) return refuse(404, 'This question is not in your inbox.');
    if (typeof choice !== 'string' || (text !== undefined && typeof text !== 'string')) {
      return refuse(400, 'That vote could not be read; try again.');
    }
    try {
      await voteFromInbox(app.services, signedIn.session.email, pauseId, { choice, text: text ?? null });
    } catch (error) {
      if (!(error instanceof ApiError) || error.code === 'rate_limited') throw error;
      return refuse(error.status, `Your vote was not recorded: ${pageMessage(error)}`);
    }
    return reply.redirect('/inbox?voted=1', 303);
  });

  // Deleting the session row ends it on every instance at once.
  app.post('/sign-out', { config: { inbox: 'signed-in' } }, async (request, reply) => {
    await endInboxSession(app.services, signedInFor(request).session);
    inboxCookie.clear(reply, app.services);
    return reply.redirect('/inbox/sign-in?signed-out=1', 303);
  });
}
