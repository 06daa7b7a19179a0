import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endInboxSession, inboxOf, voteFromInbox } from '../actions/inbox.js';
import { postedFields } from '../domain/form-fields.js';
import { looksLikePauseId } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import type { CastVote } from '../store/inbox.js';
import { type Refused, refusedFields } from '../web/form-inputs.js';
import { Time } from '../web/layout.js';
import { pageMessage, VoteForm } from '../web/response-page.js';
import { documentOf, InboxLayout, type InboxSignedIn } from './layout.js';
import { inboxCookie, inboxSessions } from './session.js';

// A signed-in reviewer's inbox: the live questions that wait for their vote
// (soonest deadline first), each with the same vote form as their personal
// page and voted through the same action; then the votes they cast.

const html = (reply: FastifyReply) => reply.type('text/html; charset=utf-8');

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

/** Who asked a question and when: the inbox is for the named reviewers, who may know. */
const Asked = ({ by, at, as: Tag = 'p' }: { by: string; at: string; as?: 'p' | 'div' }) => (
  <Tag class="asked">
    {`Asked by ${by} · `}
    <Time at={at} />
  </Tag>
);

function VotesTable({ votes }: { votes: CastVote[] }) {
  if (votes.length === 0) return <p class="empty">You have not voted on anything yet.</p>;
  return (
    // On a phone each row is a block of lines (inbox.css), so nothing scrolls sideways.
    <div class="card votes">
      <table class="votes">
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
              <th scope="row">
                {vote.title}
                <Asked by={vote.asked_by} at={vote.created_at} as="div" />
              </th>
              <td data-label="Your vote">{vote.choice}</td>
              <td data-label="When">
                <Time at={vote.voted_at} />
              </td>
              <td data-label="Outcome">{outcomeOf(vote)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

async function renderInbox(
  app: FastifyInstance,
  signedIn: InboxSignedIn,
  notice: { voted?: string; error?: string; refused?: { pauseId: string } & Refused } = {},
): Promise<string> {
  const { waiting, votes } = await inboxOf(app.services, signedIn.session.email);
  const now = app.services.clock.now();
  const justCast = notice.voted ? votes.find((vote) => vote.pause_id === notice.voted) : undefined;
  return documentOf(
    <InboxLayout title="Your inbox" signedIn={signedIn}>
      <h1>Your inbox</h1>
      {justCast && (
        <p class="notice ok" role="status">
          {`Your vote “${justCast.choice}” on “${justCast.title}” has been recorded. Thank you.`}
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
            {waiting.map(({ pauseId, question, askedBy, createdAt }, index) => (
              <article class="card" aria-labelledby={`q-${index}`}>
                <h3 id={`q-${index}`}>{question.title}</h3>
                <Asked by={askedBy} at={createdAt} />
                {question.body && <p class="details">{question.body}</p>}
                {question.quorum && (
                  <VoteForm
                    state={{
                      question,
                      action: `/inbox/vote/${pauseId}`,
                      now,
                      ...(notice.refused?.pauseId === pauseId ? { refused: notice.refused } : {}),
                    }}
                    quorum={question.quorum}
                    extras={{ idSuffix: `-${index}`, hidden: { csrf: signedIn.csrf } }}
                  />
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
    const { voted } = request.query as Record<string, unknown>;
    return html(reply).send(await renderInbox(app, signedInFor(request), looksLikePauseId(voted) ? { voted } : {}));
  });

  app.post('/vote/:pauseId', { config: { inbox: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInFor(request);
    const { pauseId } = request.params as { pauseId: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const { choice, text } = body;
    const refuse = async (status: number, notice: { error?: string; refused?: { pauseId: string } & Refused }) =>
      html(reply)
        .code(status)
        .send(await renderInbox(app, signedIn, notice));
    if (!looksLikePauseId(pauseId)) return refuse(404, { error: 'This question is not in your inbox.' });
    if (typeof choice !== 'string' || (text !== undefined && typeof text !== 'string')) {
      return refuse(400, { error: 'That vote could not be read; try again.' });
    }
    const fields = postedFields(body);
    try {
      await voteFromInbox(app.services, signedIn.session.email, pauseId, { choice, text, fields });
    } catch (error) {
      if (!(error instanceof ApiError) || error.code === 'rate_limited') throw error;
      const problems = refusedFields(error);
      // Refused field by field: the question's card shows each problem beside its field, with what was typed.
      if (problems) return refuse(400, { refused: { pauseId, text, fields, problems } });
      return refuse(error.status, { error: `Your vote was not recorded: ${pageMessage(error)}` });
    }
    return reply.redirect(`/inbox?voted=${pauseId}`, 303);
  });

  // Deleting the session row ends it on every instance at once.
  app.post('/sign-out', { config: { inbox: 'signed-in' } }, async (request, reply) => {
    await endInboxSession(app.services, signedInFor(request).session);
    inboxCookie.clear(reply, app.services);
    return reply.redirect('/inbox/sign-in?signed-out=1', 303);
  });
}
