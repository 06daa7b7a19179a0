import { raw } from 'hono/html';

// The one way pausepoint makes HTML, for its pages and its emails alike:
// hono's JSX (the tsconfig's jsxImportSource), which escapes every value it
// is given. Nothing builds HTML by joining strings, so nothing needs an
// escaping function of its own.

/** A rendered page (or HTML email) as the document sent: the JSX's string after the doctype. */
export const documentOf = (page: unknown): string => `<!doctype html>${String(page)}`;

/** A fixed part of a page on a hot path, rendered once at start and reused as the HTML it already is. */
export const renderedOnce = (part: unknown) => raw(String(part));
