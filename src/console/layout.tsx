import type { Child } from '@pausepoint/jsx';
import { documentOf } from '../html.js';
import { Frame, Time, WhoAndSignOut } from '../web/layout.js';
import type { SignedIn } from './session.js';

// The frame of every console page (on the frame the inbox shares,
// web/layout.tsx). Hono's JSX escapes every value it is given: no page builds
// HTML by concatenation.

export type Section = 'pauses' | 'webhooks' | 'keys' | 'usage';

const SECTIONS: Array<[Section, string]> = [
  ['pauses', 'Pauses'],
  ['webhooks', 'Webhooks'],
  ['keys', 'Keys'],
  ['usage', 'Usage'],
];

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
    <Frame
      title={title}
      home="/console"
      stylesheets={['/console/assets/console.css']}
      script="/console/assets/console.js"
      mainClass={narrow ? 'narrow' : undefined}
      footer="pausepoint console"
      bar={
        signedIn ? (
          <>
            <nav class="main" aria-label="Console">
              {SECTIONS.map(([which, name]) => (
                <a href={`/console/${which}`} aria-current={section === which ? 'page' : undefined}>
                  {name}
                </a>
              ))}
            </nav>
            <WhoAndSignOut email={signedIn.developer.email} action="/console/sign-out" csrf={signedIn.csrf} />
          </>
        ) : (
          <nav class="main" aria-label="Account">
            <a href="/console/sign-in">Sign in</a>
            <a href="/console/sign-up">Create an account</a>
          </nav>
        )
      }
    >
      {children}
    </Frame>
  );
}

export { documentOf, Time };

/**
 * Text that may wrap only between its `parts` (a <wbr> between them): a URL
 * after its / . ? & =, a key in even pieces. Nothing is added to its text, so
 * a copy of it is the same.
 */
export const Breakable = ({ parts }: { parts: string[] }) => (
  <>
    {parts.map((part, index) =>
      index === 0 ? (
        part
      ) : (
        <>
          <wbr />
          {part}
        </>
      ),
    )}
  </>
);

/** A URL's pieces, each ending after a / . ? & or =. */
export const urlParts = (url: string): string[] => url.split(/(?<=[/.?&=])/);

/** A key's pieces: its prefix (svc_live_), then 12 characters at a time. */
export const keyParts = (key: string): string[] => {
  const prefix = /^[a-z]+_[a-z]+_/.exec(key)?.[0] ?? '';
  return [prefix, ...(key.slice(prefix.length).match(/.{1,12}/g) ?? [])].filter(Boolean);
};

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
