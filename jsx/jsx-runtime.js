// pausepoint's JSX runtime (the tsconfig's jsxImportSource). Every element
// becomes its HTML the moment it is made: children are already rendered when
// their parent is, so an element is a string and a page is string
// concatenation. There is no tree, no second pass, no context and no async
// component, and so nothing that needs AsyncLocalStorage (which, on Node 20,
// turns on promise hooks for the whole process).
//
// Written in plain JavaScript, with its types beside it in jsx-runtime.d.ts,
// so that the same file runs under tsx, vitest and the built service without
// a build step of its own.

/** Rendered HTML: safe to place in a page as it is. */
export class Html {
  /** @param {string} html */
  constructor(html) {
    this.html = html;
  }
  toString() {
    return this.html;
  }
}

/** Marks a string that already is HTML (a part rendered once, at start), so it is placed without escaping. */
export const raw = (html) => new Html(String(html));

const ESCAPED = /["&'<>]/;
const ESCAPES = { '"': '&quot;', '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;' };
const ESCAPED_ALL = /["&'<>]/g;
const escapeOne = (c) => ESCAPES[c];

/** Text as HTML: the five characters that could end a text node or an attribute value are escaped. */
export const escapeText = (text) => (ESCAPED.test(text) ? text.replace(ESCAPED_ALL, escapeOne) : text);

const VOID_ELEMENTS = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
]);

// An attribute HTML reads by its presence: `true` writes it bare, `false` leaves it out.
const BOOLEAN_ATTRIBUTES = new Set([
  'async',
  'autofocus',
  'checked',
  'defer',
  'disabled',
  'formnovalidate',
  'hidden',
  'inert',
  'multiple',
  'novalidate',
  'open',
  'readonly',
  'required',
  'reversed',
  'selected',
]);

const RENAMED_ATTRIBUTES = { className: 'class', htmlFor: 'for', httpEquiv: 'http-equiv' };
const ATTRIBUTE_NAME = /^[a-zA-Z_:][-a-zA-Z0-9_:.]*$/;
const TAG_NAME = /^[a-zA-Z][-a-zA-Z0-9]*$/;

function appendChild(html, child) {
  if (typeof child === 'string') return html + escapeText(child);
  if (child instanceof Html) return html + child.html;
  if (child === null || child === undefined || typeof child === 'boolean') return html;
  if (typeof child === 'number') return html + child;
  if (Array.isArray(child)) {
    for (const each of child) html = appendChild(html, each);
    return html;
  }
  return html + escapeText(String(child));
}

function attributesOf(tag, props) {
  let html = '';
  for (const key in props) {
    if (key === 'children' || key === 'key') continue;
    const value = props[key];
    if (value === null || value === undefined) continue;
    const name = RENAMED_ATTRIBUTES[key] ?? key;
    if (!ATTRIBUTE_NAME.test(name))
      throw new Error(`<${tag}> has an attribute with an invalid name: ${JSON.stringify(name)}`);
    if (typeof value === 'boolean' && BOOLEAN_ATTRIBUTES.has(name)) {
      if (value) html += ` ${name}=""`;
    } else if (typeof value === 'function' || (typeof value === 'object' && !(value instanceof Html))) {
      throw new Error(`<${tag} ${name}> must be a string, a number or a boolean`);
    } else {
      html += ` ${name}="${value instanceof Html ? value.html : escapeText(String(value))}"`;
    }
  }
  return html;
}

/**
 * Makes an element: an intrinsic one (a tag name) as its HTML, a component (a
 * function) by calling it with its props. `key` is accepted and ignored.
 */
export function jsx(tag, props) {
  if (typeof tag === 'function') {
    const rendered = tag(props);
    return rendered instanceof Html ? rendered : new Html(appendChild('', rendered));
  }
  if (!TAG_NAME.test(tag)) throw new Error(`Invalid tag name: ${JSON.stringify(tag)}`);
  const opening = `<${tag}${attributesOf(tag, props)}`;
  const children = props.children;
  if (VOID_ELEMENTS.has(tag) && (children === undefined || children === null)) return new Html(`${opening}/>`);
  return new Html(`${appendChild(`${opening}>`, children)}</${tag}>`);
}

export { jsx as jsxs, jsx as jsxDEV };

/** `<>…</>`: its children, one after another. */
export const Fragment = ({ children }) => new Html(appendChild('', children));
