import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { GENERATED_FILE, generateSdkTypes } from '../../scripts/generate-sdk-types.js';

// The SDK's types come from the service's OpenAPI document. These tests fail
// when the two drift apart: the committed generated file must be what the
// service generates today, the SDK must compile against it, and a change in
// the document must break the SDK's compile rather than slip through.

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const scratch = mkdtempSync(join(tmpdir(), 'pausepoint-sdk-types-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function compile(project: string): Promise<{ ok: boolean; output: string }> {
  try {
    await run(process.execPath, [tsc, '-p', project, '--noEmit'], { cwd: root });
    return { ok: true, output: '' };
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

it('the committed sdk/src/generated/openapi.ts is what the service generates (run npm run generate:sdk)', async () => {
  const generated = await generateSdkTypes();
  expect(generated.length).toBeGreaterThan(1000);
  expect(generated, 'sdk/src/generated/openapi.ts is stale: run npm run generate:sdk').toBe(
    readFileSync(GENERATED_FILE, 'utf8'),
  );
}, 60_000);

it('the SDK compiles against the generated types, with no Node types at all', async () => {
  const result = await compile(join(root, 'sdk/tsconfig.json'));
  expect(result.output).toBe('');
  expect(result.ok).toBe(true);
}, 60_000);

it('a change in the OpenAPI document breaks the SDK’s compile', async () => {
  // A copy of the SDK whose generated types say a pause's status is "open", not "pending".
  const copy = join(scratch, 'sdk');
  cpSync(join(root, 'sdk/src'), join(copy, 'src'), { recursive: true });
  writeFileSync(
    join(copy, 'tsconfig.json'),
    JSON.stringify({
      extends: join(root, 'sdk/tsconfig.json'),
      include: ['src'],
      compilerOptions: { outDir: 'dist', rootDir: 'src' },
    }),
  );
  writeFileSync(join(copy, 'package.json'), JSON.stringify({ type: 'module' }));
  // The adapters import their frameworks' types: the copy finds them where the SDK does.
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  // The copy as it is compiles…
  expect(await compile(join(copy, 'tsconfig.json'))).toEqual({ ok: true, output: '' });
  // …and stops compiling once the document changes.
  const file = join(copy, 'src/generated/openapi.ts');
  const original = readFileSync(file, 'utf8');
  const drifted = original.replaceAll('"pending" | "responded"', '"open" | "responded"');
  expect(drifted).not.toBe(original);
  writeFileSync(file, drifted);
  const result = await compile(join(copy, 'tsconfig.json'));
  expect(result.ok).toBe(false);
  expect(result.output).toMatch(/TS2367.*"open".*"pending"/);
}, 60_000);

it("the SDK's event types are the service's, in the same order", async () => {
  // The SDK is a package of its own and cannot import the service's list.
  const { EVENT_TYPES } = await import('../../src/domain/events.js');
  const { WEBHOOK_EVENT_TYPES } = await import('../../sdk/src/types.js');
  expect([...WEBHOOK_EVENT_TYPES]).toEqual([...EVENT_TYPES]);
});
