import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Account, registerAccount } from '../helpers/http.js';
import { createPause } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The SDK must run where there is no Node: only fetch and Web Crypto (Deno,
// Bun, browsers, edge workers). Its compiled output is loaded into a bare V8
// context that has no `process`, no `require` and no way to import anything
// but the SDK's own files, and used there against a real service.

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const sdkSource = join(root, 'sdk/src');
const out = mkdtempSync(join(tmpdir(), 'pausepoint-sdk-build-'));

let service: TestService;
let dev: Account;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  // A fresh build of the SDK, so the test never runs a stale sdk/dist.
  await run(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'sdk/tsconfig.json'), '--outDir', out],
    {
      cwd: root,
    },
  );
}, 60_000);
afterAll(async () => {
  await service?.destroy();
  rmSync(out, { recursive: true, force: true });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** The framework adapters (subpath exports) and the one package each may import: its optional peer dependency. */
const ADAPTERS: Record<string, { file: string; framework: string }> = {
  './ai': { file: 'ai.ts', framework: 'ai' },
  './openai-agents': { file: 'openai-agents.ts', framework: '@openai/agents' },
};

it('imports nothing but its own files: no node: modules, no service code, no packages but an adapter its framework', () => {
  const adapterOf = new Map(Object.values(ADAPTERS).map((adapter) => [join(sdkSource, adapter.file), adapter]));
  for (const file of sourceFiles(sdkSource)) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
    for (const specifier of specifiers) {
      if (specifier === adapterOf.get(file)?.framework) continue;
      expect(specifier.startsWith('./') || specifier.startsWith('../'), `${file} imports ${specifier}`).toBe(true);
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/\.\.\/\.\.\/|src\//);
    }
  }
  const manifest = JSON.parse(readFileSync(join(root, 'sdk/package.json'), 'utf8'));
  expect(manifest.name).toBe('@pausepoint/sdk');
  expect(manifest.type).toBe('module');
  expect(manifest.dependencies ?? {}).toEqual({});
  // Each framework is a peer dependency that nobody has to install.
  const frameworks = Object.values(ADAPTERS).map((adapter) => adapter.framework);
  expect(Object.keys(manifest.peerDependencies).sort()).toEqual([...frameworks].sort());
  for (const framework of frameworks) expect(manifest.peerDependenciesMeta[framework]).toEqual({ optional: true });
  // What the package exports is what the build emits: the client and each adapter.
  expect(Object.keys(manifest.exports).sort()).toEqual(['.', './package.json', ...Object.keys(ADAPTERS)].sort());
  for (const [subpath, exported] of Object.entries<Record<string, string>>(manifest.exports)) {
    if (subpath === './package.json') continue;
    expect(Object.keys(exported), subpath).toEqual(['types', 'default']);
    expect(existsSync(join(out, exported.types!.replace('./dist/', ''))), exported.types).toBe(true);
    expect(existsSync(join(out, exported.default!.replace('./dist/', ''))), exported.default).toBe(true);
  }
});

// Imports the built SDK in a process where loading any framework package throws.
const NO_FRAMEWORKS_SCRIPT = `
import { register } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const hooks = [
  'export async function resolve(specifier, context, next) {',
  "  const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');",
  "  const framework = ['ai', 'zod', 'openai'].includes(name) || /^@(ai-sdk|openai)[/]/.test(name);",
  "  if (framework) throw new Error('loaded ' + specifier);",
  '  return next(specifier, context);',
  '}',
].join('\\n');
register('data:text/javascript,' + encodeURIComponent(hooks));
const dir = process.argv[1];
const result = {};
for (const file of ['index.js', 'ai.js', 'openai-agents.js']) {
  try {
    const module = await import(pathToFileURL(join(dir, file)).href);
    result[file] = Object.keys(module).sort();
  } catch (error) {
    result[file] = String(error.message);
  }
}
console.log(JSON.stringify(result));
`;

it('loads no framework: not for @pausepoint/sdk, not even for /ai; /openai-agents loads @openai/agents', async () => {
  const { stdout } = await run(
    process.execPath,
    ['--no-warnings', '--input-type=module', '-e', NO_FRAMEWORKS_SCRIPT, out],
    { cwd: root },
  );
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result['index.js']).toContain('Pausepoint');
  // The AI SDK adapter loads nothing of the framework: a guarded tool is a plain object, and only its first
  // call imports `ai` (asSchema, for the form).
  expect(result['ai.js']).toEqual(['guardTool', 'guardTools', 'isEditedToolResult', 'isToolRefusal']);
  // The hook does catch a framework import: the Agents adapter calls the framework's run.
  expect(result['openai-agents.js']).toBe('loaded @openai/agents');
}, 30_000);

// Loads the built SDK into a new context with only the globals an edge runtime has.
const EDGE_SCRIPT = `
import vm from 'node:vm';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
const [dir, baseUrl, apiKey, pauseId, withCrypto] = process.argv.slice(1);
const globals = { fetch, TextEncoder, TextDecoder, URL, URLSearchParams, AbortController, AbortSignal,
  Headers, Request, Response, setTimeout, clearTimeout, console, DOMException };
if (withCrypto === 'yes') globals.crypto = globalThis.crypto;
const context = vm.createContext(globals);
const modules = new Map();
function load(file) {
  if (!modules.has(file)) modules.set(file, new vm.SourceTextModule(readFileSync(file, 'utf8'), { identifier: file, context }));
  return modules.get(file);
}
const root = load(join(dir, 'index.js'));
await root.link(async (specifier, referencing) => {
  if (!specifier.startsWith('.')) throw new Error('the SDK imported ' + specifier);
  return load(join(dirname(referencing.identifier), specifier));
});
await root.evaluate();
const sdk = root.namespace;
const result = { process: vm.runInContext('typeof process', context), require: vm.runInContext('typeof require', context) };
try {
  const secret = 'whsec_0123456789abcdef';
  const signature = await sdk.signWebhookPayload('{"a":1}', secret);
  result.signature = signature;
  result.verified = await sdk.verifyWebhookSignature('{"a":1}', signature, secret);
  result.tampered = await sdk.verifyWebhookSignature('{"a":2}', signature, secret);
  const client = new sdk.Pausepoint({ apiKey, baseUrl });
  result.pause = (await client.pauses.get(pauseId)).id;
  result.created = (await client.pauses.create({ title: 'From the edge?' })).status;
  try { new sdk.Pausepoint({ baseUrl }); } catch (error) { result.noKey = error.code; }
} catch (error) {
  result.error = String(error && error.message || error);
}
console.log(JSON.stringify(result));
`;

async function runAtTheEdge(withCrypto: boolean, pauseId: string) {
  const { stdout } = await run(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--no-warnings',
      '--input-type=module',
      '-e',
      EDGE_SCRIPT,
      out,
      service.url,
      dev.test,
      pauseId,
      withCrypto ? 'yes' : 'no',
    ],
    { cwd: root },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

it('works in a runtime with only fetch and Web Crypto (no process, no node:crypto)', async () => {
  const pause = await createPause(service.url, dev.test);
  const result = await runAtTheEdge(true, pause.id);
  expect(result).toEqual({
    process: 'undefined',
    require: 'undefined',
    signature: `sha256=${createHmac('sha256', 'whsec_0123456789abcdef').update('{"a":1}').digest('hex')}`,
    verified: true,
    tampered: false,
    pause: pause.id,
    created: 'pending',
    noKey: 'missing_api_key',
  });
}, 30_000);

it('says plainly when a runtime has no Web Crypto at all', async () => {
  const pause = await createPause(service.url, dev.test);
  const result = await runAtTheEdge(false, pause.id);
  expect(result.error).toMatch(/no Web Crypto/);
}, 30_000);
