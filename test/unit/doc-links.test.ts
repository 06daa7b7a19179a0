import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOC_FILES, DOCS_ROOT as ROOT, readDoc } from '../helpers/docs.js';

// The documentation's relative links and images point at files that exist,
// and a link's #anchor at a heading of its target, so moving a section or a
// file cannot leave a reader at a dead end (the SDK's README links into docs/ too). The README stays a front door.

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readDoc(file).replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)));
}

/** Every link target of a Markdown file, with code blocks and inline code left out. */
function links(file: string): string[] {
  const text = readDoc(file)
    .replace(/^```[\s\S]*?^```$/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [
    ...[...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!),
    ...[...text.matchAll(/<img [^>]*src="([^"]+)"/g)].map((match) => match[1]!),
  ];
}

describe('documentation links', () => {
  it.each([...DOC_FILES, 'sdk/README.md'])('%s: every relative link resolves', (file) => {
    const broken: string[] = [];
    for (const link of links(file)) {
      if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), decodeURI(path)));
      if (!existsSync(join(ROOT, target))) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !statSync(join(ROOT, target)).isDirectory()) {
        if (!anchors(target).has(anchor)) broken.push(`${link}: no heading #${anchor} in ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README is a front door: at most 250 lines', () => {
    const lines = readDoc('README.md').split('\n').length;
    expect(lines).toBeLessThanOrEqual(250);
  });
});
