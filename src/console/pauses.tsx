import type { FastifyInstance } from 'fastify';
import { nobodyTold } from '../actions/notifications.js';
import type { PresentedPause } from '../actions/present-pause.js';
import { countOwnedPending, listOwnedPauses, searchOwnedPauses } from '../actions/read-pauses.js';
import { looksLikePauseId } from '../domain/ids.js';
import type { Mode } from '../domain/keys.js';
import type { PauseStatus } from '../domain/pause.js';
import { ApiError } from '../errors.js';
import { documentOf, Layout, Time } from './layout.js';
import { ModeSwitch, Pager, StatusFilter } from './lists.js';
import { type SignedIn, signedInOf } from './session.js';

// The developer's pauses, newest first, through the same action as
// GET /v1/pause: one mode at a time (live or test), an optional status, and
// the API's cursor (the last id shown) for the next page. With words to look
// for in titles, the page comes from the title search instead, which pages
// with a cursor of its own.

export const PAGE_SIZE = 25;
const STATUSES: readonly PauseStatus[] = ['pending', 'responded', 'timed_out', 'cancelled'];
export const STATUS_LABEL: Record<PauseStatus, string> = {
  pending: 'Pending',
  responded: 'Responded',
  timed_out: 'Timed out',
  cancelled: 'Cancelled',
};

export const modeOf = (value: unknown): Mode => (value === 'test' ? 'test' : 'live');

/**
 * The mode the list opens on when the address names none: the mode of the
 * developer's newest pause (the one they last worked in), live when they have
 * none; so a quick start that made only test pauses opens on them.
 */
async function lastUsedMode(services: Parameters<typeof listOwnedPauses>[0], developerId: string): Promise<Mode> {
  const newest = (mode: Mode) =>
    listOwnedPauses(services, { developerId, mode }, { limit: 1 }).then((page) => page.data[0]?.id ?? '');
  const [live, test] = await Promise.all([newest('live'), newest('test')]);
  return test > live ? 'test' : 'live';
}

interface ListQuery {
  mode: Mode;
  status?: PauseStatus | undefined;
  after?: string | undefined;
  /** Words searched for in titles. */
  q?: string | undefined;
  /** The title search's cursor. */
  cursor?: string | undefined;
}

/** What may be typed in the search box (titles are at most 200 characters). */
const MAX_SEARCH_LENGTH = 200;

/** The query string of a list page: its mode (the list opens on the last used one without it), and each other part only when it is not the default. */
export function listHref(query: ListQuery): string {
  const params = new URLSearchParams();
  if (query.mode === 'test') params.set('mode', 'test');
  else params.set('mode', 'live');
  if (query.q) params.set('q', query.q);
  if (query.status) params.set('status', query.status);
  if (query.after) params.set('after', query.after);
  if (query.cursor) params.set('cursor', query.cursor);
  return `/console/pauses?${params.toString()}`;
}

/** The pending count alone, which the page's script fetches again now and then. */
const pendingHref = (mode: Mode) => `/console/pauses/pending${mode === 'test' ? '?mode=test' : ''}`;

export const pauseHref = (pause: { id: string; mode: Mode }) =>
  `/console/pauses/${pause.id}${pause.mode === 'test' ? '?mode=test' : ''}`;

export const StatusBadge = ({ status }: { status: PauseStatus }) => (
  <span class={`status ${status}`}>{STATUS_LABEL[status]}</span>
);

interface PausesProps {
  signedIn: SignedIn;
  query: ListQuery;
  pauses: PresentedPause[];
  /** The query of the next page, when there is one. */
  next: ListQuery | undefined;
  pending: number;
  /** The pending pauses of the other mode, told on an empty first page. */
  pendingElsewhere: number;
  /** Why the search was refused, in a sentence naming the rule. */
  refused?: string | undefined;
}

function PausesPage({ signedIn, query, pauses, next, pending, pendingElsewhere, refused }: PausesProps) {
  const other: Mode = query.mode === 'live' ? 'test' : 'live';
  const paged = query.after !== undefined || query.cursor !== undefined;
  return (
    <Layout title="Pauses" signedIn={signedIn} section="pauses">
      <h1>Pauses</h1>
      <div class="toolbar">
        <ModeSwitch mode={query.mode} hrefOf={(mode) => listHref({ mode })} />
        <p class="count" id="pending-count" data-live-count={pendingHref(query.mode)} aria-live="polite">
          <strong>{pending}</strong> pending
        </p>
        <StatusFilter
          action="/console/pauses"
          mode={query.mode}
          statuses={STATUSES}
          labels={STATUS_LABEL}
          selected={query.status}
        >
          <div>
            <label for="q">Title</label>
            <input
              id="q"
              name="q"
              type="search"
              value={query.q ?? ''}
              maxlength={MAX_SEARCH_LENGTH}
              placeholder="Words in the title"
            />
          </div>
        </StatusFilter>
      </div>
      {refused ? (
        <div class="card empty" role="alert">
          <p>{refused}</p>
        </div>
      ) : pauses.length === 0 ? (
        <div class="card empty">
          <p>
            {next
              ? query.status
                ? 'None of the newest pauses whose titles match has this status. Older pauses may: look further back.'
                : 'None of the newest pauses looked at has every word in its title. Older pauses may: look further back.'
              : paged
                ? 'No more pauses.'
                : query.q
                  ? `No ${query.status ? `${STATUS_LABEL[query.status].toLowerCase()} ` : ''}${query.mode} pauses with “${query.q}” in the title.`
                  : query.status
                    ? `No ${STATUS_LABEL[query.status].toLowerCase()} ${query.mode} pauses.`
                    : `No ${query.mode} pauses yet. Create one with the API, the CLI or an SDK.`}
          </p>
          {!paged && !query.q && !query.status && pendingElsewhere > 0 && (
            <p>
              {`${pendingElsewhere} ${other} pause${pendingElsewhere === 1 ? ' is' : 's are'} waiting: `}
              <a href={listHref({ mode: other })}>{`see the ${other} pauses`}</a>
            </p>
          )}
        </div>
      ) : (
        <div class="card">
          <table class="pauses">
            <caption class="muted">
              {`${query.mode === 'live' ? 'Live' : 'Test'} pauses${query.status ? `, ${STATUS_LABEL[query.status].toLowerCase()}` : ''}${query.q ? `, titles with “${query.q}”` : ''}, newest first`}
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
                    {nobodyTold(pause.notifications) && (
                      <>
                        {' '}
                        <span class="status failed">Nobody told</span>
                      </>
                    )}
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
      <Pager
        newest={paged ? listHref({ mode: query.mode, status: query.status, q: query.q }) : undefined}
        older={next && listHref(next)}
      >
        Older pauses
      </Pager>
    </Layout>
  );
}

export function pausesPage(app: FastifyInstance): void {
  app.get('/pauses/pending', { config: { console: 'signed-in' } }, async (request) => {
    const signedIn = signedInOf(request)!;
    const mode = modeOf((request.query as Record<string, unknown>).mode);
    return { pending: await countOwnedPending(app.services, { developerId: signedIn.developer.id, mode }) };
  });

  app.get('/pauses', { config: { console: 'signed-in' } }, async (request, reply) => {
    const signedIn = signedInOf(request)!;
    const raw = request.query as Record<string, unknown>;
    const text = typeof raw.q === 'string' ? raw.q.trim().slice(0, MAX_SEARCH_LENGTH) : '';
    const query: ListQuery = {
      mode: raw.mode === undefined ? await lastUsedMode(app.services, signedIn.developer.id) : modeOf(raw.mode),
      status: STATUSES.find((status) => status === raw.status),
      q: text || undefined,
    };
    const owner = { developerId: signedIn.developer.id, mode: query.mode };
    const readPage = async (): Promise<{
      pauses: PresentedPause[];
      next: ListQuery | undefined;
      refused?: string | undefined;
    }> => {
      if (query.q) {
        query.cursor = typeof raw.cursor === 'string' && raw.cursor.length <= 80 ? raw.cursor : undefined;
        app.rateLimits.search.hit(`search:${signedIn.session.id}`);
        const page = await searchOwnedPauses(app.services, owner, { ...query, text: query.q, limit: PAGE_SIZE });
        return { pauses: page.data, next: page.next ? { ...query, cursor: page.next } : undefined };
      }
      query.after = looksLikePauseId(raw.after) ? raw.after : undefined;
      const page = await listOwnedPauses(app.services, owner, {
        ...query,
        limit: PAGE_SIZE,
        startingAfter: query.after,
      });
      const last = page.data[page.data.length - 1];
      return { pauses: page.data, next: page.hasMore && last ? { ...query, after: last.id } : undefined };
    };
    // A refused search shows the page with the rule it broke, and the answer's status says so too.
    const searched = readPage().catch((error: unknown) => {
      if (!(error instanceof ApiError) || error.code === 'not_found') throw error;
      reply.code(error.status).headers(error.headers ?? {});
      return { pauses: [], next: undefined, refused: error.message };
    });
    const [{ pauses, next, refused }, pending] = await Promise.all([searched, countOwnedPending(app.services, owner)]);
    const pendingElsewhere =
      pauses.length === 0 && refused === undefined
        ? await countOwnedPending(app.services, { ...owner, mode: query.mode === 'live' ? 'test' : 'live' })
        : 0;
    return reply
      .type('text/html; charset=utf-8')
      .send(
        documentOf(
          <PausesPage
            signedIn={signedIn}
            query={query}
            pauses={pauses}
            next={next}
            pending={pending}
            pendingElsewhere={pendingElsewhere}
            refused={refused}
          />,
        ),
      );
  });
}
