import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The documentation a reader is sent to: the README (the front door), the
// guides and references under docs/, ARCHITECTURE.md and CONTRIBUTING.md.

export const DOCS_ROOT = new URL('../../', import.meta.url).pathname;

/** Every documentation file, as a path from the repository's root. */
export const DOC_FILES: string[] = [
  'README.md',
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(DOCS_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export const readDoc = (file: string): string => readFileSync(join(DOCS_ROOT, file), 'utf8');

/** The fenced code blocks of a Markdown text: language, marks after it (```sh fragment), code, and line. */
export function fencedBlocks(text: string): { line: number; lang: string; marks: string[]; code: string }[] {
  return [...text.matchAll(/^```(\S*)([^\n]*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    line: text.slice(0, match.index).split('\n').length,
    lang: match[1]!,
    marks: match[2]!.trim().split(/\s+/).filter(Boolean),
    code: match[3]!,
  }));
}
