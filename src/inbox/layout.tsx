import type { Child } from 'hono/jsx';
import type { InboxSession } from '../store/inbox.js';
import { WhoAndSignOut } from '../web/layout.js';

// The frame of every inbox page: the response page's stylesheet (the inbox
// shows the same vote form) and a few lines of its own. No script: every
// page works as it is.

export interface InboxSignedIn {
  session: InboxSession;
  /** The CSRF token for this session's forms. */
  csrf: string;
}

export function InboxLayout({
  title,
  signedIn,
  children,
}: {
  title: string;
  signedIn?: InboxSignedIn | undefined;
  children?: Child;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{`${title} · pausepoint inbox`}</title>
        <link rel="stylesheet" href="/assets/page.css" />
        <link rel="stylesheet" href="/inbox/assets/inbox.css" />
      </head>
      <body>
        <header class="inbox-top">
          <a class="brand" href="/inbox">
            pausepoint inbox
          </a>
          {signedIn && <WhoAndSignOut email={signedIn.session.email} action="/inbox/sign-out" csrf={signedIn.csrf} />}
        </header>
        <main id="content">
          {children}
          <footer>pausepoint inbox</footer>
        </main>
      </body>
    </html>
  );
}

export const documentOf = (page: unknown): string => `<!doctype html>${String(page)}`;

export function InboxMessage({
  title,
  message,
  signedIn,
  children,
}: {
  title: string;
  message: string;
  signedIn?: InboxSignedIn | undefined;
  children?: Child;
}) {
  return (
    <InboxLayout title={title} signedIn={signedIn}>
      <div class="card">
        <h1>{title}</h1>
        <p>{message}</p>
        {children ?? (
          <p>
            <a href="/inbox">Back to the inbox</a>
          </p>
        )}
      </div>
    </InboxLayout>
  );
}

export const INBOX_CSS = `
.inbox-top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between;
  max-width: 40rem; margin: 0 auto; padding: .75rem 1rem 0; }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
.who { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; color: var(--muted); font-size: .9rem;
  overflow-wrap: anywhere; }
.who form { margin: 0; }
button.small { flex: none; min-height: 2.5rem; padding: .35rem .8rem; font-size: .9rem; }
input[type=email] { width: 100%; min-height: 2.75rem; padding: .6rem .7rem; font: inherit; color: inherit;
  background: transparent; border: 1px solid var(--line); border-radius: 8px; margin: 0 0 1rem; }
input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
a { color: var(--accent); }
main p { overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
h3 { margin: 0 0 .5rem; font-size: 1.15rem; overflow-wrap: anywhere; }
.stack > .card { margin: 0 0 1rem; }
.empty { color: var(--muted); }
.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; font-size: .95rem; }
td time { white-space: normal; }
caption { text-align: left; color: var(--muted); padding: 0 0 .5rem; }
th, td { text-align: left; padding: .5rem .4rem; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: break-word; }
`;
