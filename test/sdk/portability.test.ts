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

it('imports nothing but its own files: no node: modules, no service code, no packages', () => {
  for (const file of sourceFiles(sdkSource)) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
    for (const specifier of specifiers) {
      expect(specifier.startsWith('./') || specifier.startsWith('../'), `${file} imports ${specifier}`).toBe(true);
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/\.\.\/\.\.\/|src\//);
    }
  }
  const manifest = JSON.parse(readFileSync(join(root, 'sdk/package.json'), 'utf8'));
  expect(manifest.name).toBe('@pausepoint/sdk');
  expect(manifest.type).toBe('module');
  expect(manifest.dependencies ?? {}).toEqual({});
  // What the package exports is what the build emits.
  const exported = manifest.exports['.'];
  expect(existsSync(join(out, exported.types.replace('./dist/', '')))).toBe(true);
  expect(existsSync(join(out, exported.default.replace('./dist/', '')))).toBe(true);
});

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
