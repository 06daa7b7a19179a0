// Types for jsx-runtime.js: what TypeScript checks the project's JSX against.

/** Rendered HTML: safe to place in a page as it is. */
export declare class Html {
  readonly html: string;
  constructor(html: string);
  toString(): string;
}

/** What may stand between tags: text (escaped), numbers, rendered HTML, and nothing (null, undefined, booleans). */
export type Child = Html | string | number | boolean | null | undefined | readonly Child[];

/** An attribute's value; null, undefined and (on a boolean attribute) false leave it out. */
export type AttributeValue = string | number | boolean | null | undefined | Html;

/** Marks a string that already is HTML (a part rendered once, at start), so it is placed without escaping. */
export declare function raw(html: string | Html): Html;

/** Text as HTML: the five characters that could end a text node or an attribute value are escaped. */
export declare function escapeText(text: string): string;

type Component<P> = (props: P) => Html | null;

export declare function jsx(tag: string | Component<any>, props: Record<string, unknown>, key?: unknown): Html;
export declare const jsxs: typeof jsx;
export declare const jsxDEV: typeof jsx;
export declare function Fragment(props: { children?: Child }): Html;

export declare namespace JSX {
  type Element = Html;
  interface ElementChildrenAttribute {
    children: unknown;
  }
  interface IntrinsicAttributes {
    key?: string | number;
  }
  interface IntrinsicElements {
    [tag: string]: { children?: Child; [attribute: string]: AttributeValue | Child };
  }
}
