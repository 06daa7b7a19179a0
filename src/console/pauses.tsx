import type { FastifyInstance } from 'fastify';
import type { PresentedPause } from '../actions/present-pause.js';
import { countOwnedPending, listOwnedPauses } from '../actions/read-pauses.js';
import type { Mode } from '../domain/keys.js';
import type { PauseStatus } from '../domain/pause.js';
import { documentOf, Layout, Time } from './layout.js';
import { type SignedIn, signedInOf } from './session.js';

// The developer's pauses, newest first, through the same action as
// GET /v1/pause: one mode at a time (live or test), an optional status, and
// the API's cursor (the last id shown) for the next page.

export const PAGE_SIZE = 25;
const STATUSES: readonly PauseStatus[] = ['pending', 'responded', 'timed_out', 'cancelled'];
export const STATUS_LABEL: Record<PauseStatus, string> = {
  pending: 'Pending',
  responded: 'Responded',
  timed_out: 'Timed out',
  cancelled: 'Cancelled',
};
const PAUSE_ID = /^pause_[0-9A-Za-z]{1,64}$/;

export const modeOf = (value: unknown): Mode => (value === 'test' ? 'test' : 'live');

interface ListQuery {
  mode: Mode;
  status?: PauseStatus | undefined;
  after?: string | undefined;
}

/** The query string of a list page; each part only when it is not the default. */
export function listHref(query: ListQuery): string {
  const params = new URLSearchParams();
  if (query.mode === 'test') params.set('mode', 'test');
  if (query.status) params.set('status', query.status);
  if (query.after) params.set('after', query.after);
  const search = params.toString();
  return `/console/pauses${search ? `?${search}` : ''}`;
}

export const pauseHref = (pause: { id: string; mode: Mode }) =>
  `/console/pauses/${pause.id}${pause.mode === 'test' ? '?mode=test' : ''}`;

export const StatusBadge = ({ status }: { status: PauseStatus }) => (
  <span class={`status ${status}`}>{STATUS_LABEL[status]}</span>
);

interface PausesProps {
  signedIn: SignedIn;
  query: ListQuery;
  pauses: PresentedPause[];
  hasMore: boolean;
  pending: number;
}

function PausesPage({ signedIn, query, pauses, hasMore, pending }: PausesProps) {
  const last = pauses[pauses.length - 1];
  return (
    <Layout title="Pauses" signedIn={signedIn} section="pauses">
      <h1>Pauses</h1>
      <div class="toolbar">
        <nav class="switch" aria-label="Mode">
          <a href={listHref({ mode: 'live' })} aria-current={query.mode === 'live' ? 'page' : undefined}>
            Live
          </a>
          <a href={listHref({ mode: 'test' })} aria-current={query.mode === 'test' ? 'page' : undefined}>
            Test
          </a>
        </nav>
        <p class="count" id="pending-count">
          <strong>{pending}</strong> pending
        </p>
        <form method="get" action="/console/pauses">
          {query.mode === 'test' && <input type="hidden" name="mode" value="test" />}
          <div>
            <label for="status">Status</label>
            <select id="status" name="status">
              <option value="">All</option>
              {STATUSES.map((status) => (
                <option value={status} selected={query.status === status}>
                  {STATUS_LABEL[status]}
                </option>
              ))}
            </select>
          </div>
          <button type="submit">Show</button>
        </form>
      </div>
      {pauses.length === 0 ? (
        <div class="card empty">
          <p>
            {query.after
              ? 'No more pauses.'
              : query.status
                ? `No ${STATUS_LABEL[query.status].toLowerCase()} ${query.mode} pauses.`
                : `No ${query.mode} pauses yet. Create one with the API, the CLI or an SDK.`}
          </p>
        </div>
      ) : (
        <div class="card">
          <table class="pauses">
            <caption class="muted">
              {`${query.mode === 'live' ? 'Live' : 'Test'} pauses${query.status ? `, ${STATUS_LABEL[query.status].toLowerCase()}` : ''}, newest first`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Question</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {pauses.map((pause) => (
                <tr>
                  <td class="title">
                    <a href={pauseHref(pause)}>{pause.title}</a>
                  </td>
                  <td>
                    <StatusBadge status={pause.status} />
                  </td>
                  <td>
                    <Time at={pause.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        {query.after ? <a href={listHref({ mode: query.mode, status: query.status })}>Newest</a> : <span />}
        {hasMore && last && (
          <a href={listHref({ ...query, after: last.id })} rel="next">
            Older pauses
          </a>
        )}
      </nav>
    </Layout>
  );
}

export function pausesPage(app: FastifyInstance): void {
  app.get('/pauses', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const raw = request.query as Record<string, unknown>;
    const query: ListQuery = {
      mode: modeOf(raw.mode),
      status: STATUSES.find((status) => status === raw.status),
      after: typeof raw.after === 'string' && PAUSE_ID.test(raw.after) ? raw.after : undefined,
    };
    const owner = { developerId: signedIn.developer.id, mode: query.mode };
    const [{ data, hasMore }, pending] = await Promise.all([
      listOwnedPauses(app.services, owner, { status: query.status, limit: PAGE_SIZE, startingAfter: query.after }),
      countOwnedPending(app.services, owner),
    ]);
    return reply
      .type('text/html; charset=utf-8')
      .send(
        documentOf(<PausesPage signedIn={signedIn} query={query} pauses={data} hasMore={hasMore} pending={pending} />),
      );
  });
}
