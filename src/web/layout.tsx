import type { Child } from '@pausepoint/jsx';
import { formatUtc } from '../domain/time-format.js';

// The frame the signed-in apps share (the console, the inbox): the document,
// the skip link, the top bar with the wordmark, and the footer; and its
// stylesheet, which each app's own stylesheet includes. Hono's JSX renders to
// a string and escapes every value it is given.

export interface FrameProps {
  /** The page's title, before " · pausepoint". */
  title: string;
  /** Where the wordmark leads: the app's home. */
  home: string;
  stylesheets: string[];
  script: string;
  /** What the top bar holds after the wordmark: the app's navigation, who is signed in. */
  bar?: Child;
  /** The class of <main> (e.g. a narrow form). */
  mainClass?: string | undefined;
  footer: string;
  children?: Child;
}

export function Frame({ title, home, stylesheets, script, bar, mainClass, footer, children }: FrameProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{`${title} · pausepoint`}</title>
        {stylesheets.map((href) => (
          <link rel="stylesheet" href={href} />
        ))}
        <script src={script} defer></script>
      </head>
      <body>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <header class="top">
          <div class="bar">
            <a class="brand" href={home}>
              pause<span>point</span>
            </a>
            {bar}
          </div>
        </header>
        <main id="content" class={mainClass}>
          {children}
        </main>
        <footer class="frame">{footer}</footer>
      </body>
    </html>
  );
}

/**
 * A time in UTC, which the page's script shows in the reader's zone: relative
 * to now with the local time as its tooltip, or (`relative={false}`, the
 * response page) as the local time itself.
 */
export const Time = ({ at, relative = true }: { at: string; relative?: boolean }) => (
  <time datetime={at} data-relative={relative ? '' : undefined}>
    {formatUtc(at)}
  </time>
);

/** Who is signed in, and the sign-out button (a POST with the session's CSRF token). */
export function WhoAndSignOut({ email, action, csrf }: { email: string; action: string; csrf: string }) {
  return (
    <div class="who">
      <span>{email}</span>
      <form method="post" action={action}>
        <input type="hidden" name="csrf" value={csrf} />
        <button type="submit" class="small">
          Sign out
        </button>
      </form>
    </div>
  );
}

/** The frame's styles, over the colours (--fg, --muted, --card, --line, --accent) each app defines; --frame-width is the app's content width. */
export const FRAME_CSS = `
.skip { position: absolute; left: -999px; top: .5rem; background: var(--card); padding: .5rem 1rem; z-index: 2; }
.skip:focus { left: .5rem; }
header.top { background: var(--card); border-bottom: 1px solid var(--line); }
header.top .bar { max-width: var(--frame-width, 64rem); margin: 0 auto; padding: .6rem 1rem; display: flex;
  flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; }
.brand { font-weight: 700; font-size: 1.1rem; color: var(--fg); text-decoration: none; letter-spacing: -.01em; }
.brand span { color: var(--accent); }
nav.main { display: flex; gap: 1rem; flex: 1; }
nav.main a { color: var(--muted); text-decoration: none; font-weight: 600; padding: .25rem 0; }
nav.main a[aria-current="page"] { color: var(--fg); border-bottom: 2px solid var(--accent); }
.who { display: flex; align-items: center; gap: .75rem; color: var(--muted); font-size: .9rem; }
.who form { margin: 0; } .who span { overflow-wrap: anywhere; min-width: 0; } .who button { white-space: nowrap; }
footer.frame { max-width: var(--frame-width, 64rem); margin: 0 auto; padding: 0 1rem 2rem; color: var(--muted);
  font-size: .8rem; text-align: left; }
`;
