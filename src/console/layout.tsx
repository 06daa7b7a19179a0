import type { Child } from 'hono/jsx';
import { WhoAndSignOut } from '../web/layout.js';
import type { SignedIn } from './session.js';

// The frame of every console page. Hono's JSX renders to a string and escapes
// every value it is given: no page builds HTML by concatenation.

export type Section = 'pauses' | 'webhooks' | 'keys' | 'usage';

export interface LayoutProps {
  title: string;
  signedIn?: SignedIn | undefined;
  section?: Section;
  /** Forms with one column (sign-in, sign-up). */
  narrow?: boolean;
  children?: Child;
}

export function Layout({ title, signedIn, section, narrow, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{`${title} · pausepoint`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <header class="top">
          <div class="bar">
            <a class="brand" href="/console">
              pause<span>point</span>
            </a>
            {signedIn ? (
              <>
                <nav class="main" aria-label="Console">
                  <a href="/console/pauses" aria-current={section === 'pauses' ? 'page' : undefined}>
                    Pauses
                  </a>
                  <a href="/console/webhooks" aria-current={section === 'webhooks' ? 'page' : undefined}>
                    Webhooks
                  </a>
                  <a href="/console/keys" aria-current={section === 'keys' ? 'page' : undefined}>
                    Keys
                  </a>
                  <a href="/console/usage" aria-current={section === 'usage' ? 'page' : undefined}>
                    Usage
                  </a>
                </nav>
                <WhoAndSignOut email={signedIn.developer.email} action="/console/sign-out" csrf={signedIn.csrf} />
              </>
            ) : (
              <nav class="main" aria-label="Account">
                <a href="/console/sign-in">Sign in</a>
                <a href="/console/sign-up">Create an account</a>
              </nav>
            )}
          </div>
        </header>
        <main id="content" class={narrow ? 'narrow' : undefined}>
          {children}
        </main>
        <footer>pausepoint console</footer>
      </body>
    </html>
  );
}

/** A page as the document the browser gets. */
export const documentOf = (page: unknown): string => `<!doctype html>${String(page)}`;

/** A UTC time, shown relative to now by the page's script when it runs. */
export const Time = ({ at }: { at: string }) => (
  <time datetime={at} data-relative="">
    {`${at.slice(0, 10)} ${at.slice(11, 16)} UTC`}
  </time>
);

/**
 * A value with a Copy button (added by the page's script: data-copy). A long
 * link is `short`: one line, cut with an ellipsis (the whole of it in the
 * tooltip, for screen readers and for the button).
 */
export const Copyable = ({ value, label, short }: { value: string; label: string; short?: boolean }) => (
  <p class="copy">
    {short ? (
      <code class="short" data-copy="" data-copy-label={label} title={value}>
        {value}
      </code>
    ) : (
      <code data-copy="" data-copy-label={label}>
        {value}
      </code>
    )}
  </p>
);

export const Notice = ({ kind, children }: { kind: 'ok' | 'error'; children?: Child }) => (
  <p class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
    {children}
  </p>
);

export function ErrorPage({ title, message, signedIn }: { title: string; message: string; signedIn?: SignedIn }) {
  return (
    <Layout title={title} signedIn={signedIn} narrow>
      <div class="card">
        <h1>{title}</h1>
        <p>{message}</p>
        <p>
          <a href="/console">Back to the console</a>
        </p>
      </div>
    </Layout>
  );
}
