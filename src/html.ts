import type { Html } from '@pausepoint/jsx';

// The one way pausepoint makes HTML, for its pages and its emails alike: JSX,
// rendered by our own small runtime (jsx/, the tsconfig's jsxImportSource),
// which escapes every value it is given. Nothing builds HTML by joining
// strings, so nothing needs an escaping function of its own.

/** A rendered page (or HTML email) as the document sent: the JSX's string after the doctype. */
export const documentOf = (page: Html): string => `<!doctype html>${page.html}`;
