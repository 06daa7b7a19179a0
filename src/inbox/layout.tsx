import type { Child } from '@pausepoint/jsx';
import { LOCAL_TIMES_JS } from '../domain/time-format.js';
import { documentOf } from '../html.js';
import type { InboxSession } from '../store/inbox.js';
import { FRAME_CSS, Frame, WhoAndSignOut } from '../web/layout.js';

// The frame of every inbox page: the console's frame (web/layout.tsx), the
// response page's stylesheet (the inbox shows the same vote form) and a few
// lines of its own. Its only script shows times in the reader's zone, as the
// console's and the response page's do; every page works without it.

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
    <Frame
      title={title}
      home="/inbox"
      stylesheets={['/assets/page.css', '/inbox/assets/inbox.css']}
      script="/inbox/assets/inbox.js"
      footer="pausepoint inbox"
      bar={
        signedIn && (
          <>
            <nav class="main" aria-label="Inbox">
              <a href="/inbox" aria-current="page">
                Inbox
              </a>
            </nav>
            <WhoAndSignOut email={signedIn.session.email} action="/inbox/sign-out" csrf={signedIn.csrf} />
          </>
        )
      }
    >
      {children}
    </Frame>
  );
}

export { documentOf };

export const INBOX_JS = `(function () {${LOCAL_TIMES_JS}})();\n`;

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
:root { --frame-width: 40rem; }
${FRAME_CSS}
button.small { flex: none; min-height: 2.5rem; padding: .35rem .8rem; font-size: .9rem; }
input[type=email] { width: 100%; min-height: 2.75rem; padding: .6rem .7rem; font: inherit; color: inherit;
  background: transparent; border: 1px solid var(--line); border-radius: 8px; margin: 0 0 1rem; }
input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
a { color: var(--accent); }
main p { overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
h3 { margin: 0 0 .25rem; font-size: 1.15rem; overflow-wrap: anywhere; }
.asked { margin: 0 0 1rem; color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
th .asked { margin: .15rem 0 0; font-weight: 400; font-size: .85rem; }
.stack > .card { margin: 0 0 1rem; }
.empty { color: var(--muted); }
.card.votes { padding: 1rem 1.25rem; }
table { width: 100%; border-collapse: collapse; font-size: .95rem; }
caption { text-align: left; color: var(--muted); padding: 0 0 .5rem; }
th, td { text-align: left; padding: .5rem .4rem; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: break-word; }
tbody th { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  table.votes thead { position: absolute; left: -999px; }
  table.votes tr { display: block; padding: .6rem 0; border-bottom: 1px solid var(--line); }
  table.votes th, table.votes td { display: block; border: 0; padding: .1rem 0; }
  table.votes td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
}
`;
