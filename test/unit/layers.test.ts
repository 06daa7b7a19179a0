import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Dependencies point one way: the entry points (main, service, app, cli) →
// routes, web pages (and above them the console and the inbox) and workers → actions → store → domain, with the
// infrastructure (config, html, logger, net, messages, signals) below the actions.
// The MCP tools (mcp/) are written against an interface of their own, below
// the routes (/mcp, over the actions) and the CLI (stdio, over the SDK).
// A module may import from its own folder or from any layer below it; two
// parts of the same layer may not import each other.
// And the parts that serve people and run the background work (routes, web,
// console, inbox, mcp, worker) reach the database only through the actions:
// from src/store/ they import types (`import type`), never a function.
// Run alone with: npx vitest run test/unit/layers.test.ts

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Each top-level folder or file of src/, by layer; a higher number may import a lower one. */
const LAYERS: Record<string, number> = {
  domain: 0,
  // The API's errors name the domain's field problems.
  'errors.ts': 0.5,
  'config.ts': 1,
  'html.ts': 1,
  'log-redaction.ts': 1,
  net: 2,
  store: 2,
  'logger.ts': 2,
  'metrics.ts': 3,
  'secrets.ts': 3,
  'signals.ts': 3,
  messages: 3,
  'context.ts': 4,
  actions: 5,
  http: 6,
  mcp: 6,
  routes: 7,
  web: 7,
  // The signed-in apps stand on web/'s shared page machinery (session.ts).
  console: 7.5,
  inbox: 7.5,
  worker: 7,
  'app.ts': 8,
  'service.ts': 9,
  cli: 10,
  'main.ts': 11,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

const topOf = (path: string) => relative(SRC, path).split('/')[0]!;

/** The relative imports of a file (static, dynamic and type-only), resolved to paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((specifier) => resolve(dirname(file), specifier));
}

/** The parts above the actions that may take only types from src/store/. */
const THROUGH_ACTIONS = ['http', 'routes', 'web', 'console', 'inbox', 'mcp', 'worker'];

/** The imports of a file that bring values (not `import type`), resolved to paths under src/. */
function valueImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const statements = text.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*'(\.{1,2}\/[^']+)'/g);
  const dynamic = [...text.matchAll(/import\s*\(\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  const values = [...statements]
    .filter((m) => !m[2] && !/^\{(\s*type\s+[^,}]+,?)*\s*\}$/.test(m[3]!.trim()))
    .map((m) => m[4]!);
  return [...values, ...dynamic].map((specifier) => resolve(dirname(file), specifier));
}

describe('module layers', () => {
  const files = sourceFiles(SRC);

  it('knows the layer of every part of src/', () => {
    const unknown = [...new Set(files.map(topOf))].filter((top) => !(top in LAYERS));
    expect(unknown).toEqual([]);
  });

  it('has no import from a layer above the importer', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = topOf(file);
      for (const target of importsOf(file)) {
        const to = topOf(target).replace(/\.js$/, '.ts');
        if (from === to) continue;
        if ((LAYERS[to] ?? Number.POSITIVE_INFINITY) >= (LAYERS[from] ?? 0)) {
          upward.push(`${relative(SRC, file)} imports ${relative(SRC, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('reaches the store from routes, pages, MCP and the worker only through the actions', () => {
    const direct: string[] = [];
    for (const file of files.filter((path) => THROUGH_ACTIONS.includes(topOf(path)))) {
      for (const target of valueImportsOf(file)) {
        if (topOf(target) === 'store') direct.push(`${relative(SRC, file)} imports ${relative(SRC, target)}`);
      }
    }
    expect(direct).toEqual([]);
  });
});
