import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createSecretFile, resolveMasterSecret } from '../../src/secrets.js';

// The master secret kept in the data folder when SECRET_KEY is unset (SQLite):
// generated once, written so that a crash or a full disk cannot leave a short
// one behind, and refused at start when it is short anyway.

const folders: string[] = [];

function dataFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'pausepoint-secret-'));
  folders.push(folder);
  return folder;
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const configFor = (folder: string) => loadConfig({ DATABASE_URL: `sqlite:${join(folder, 'pausepoint.db')}` });

function resolveIn(folder: string) {
  const warnings: string[] = [];
  const secret = resolveMasterSecret(configFor(folder), (message) => warnings.push(message));
  return { secret, warnings };
}

describe('the generated secret file', () => {
  it('is written once into a fresh folder: 64 hex characters and a newline, mode 0600, no temporary file left', () => {
    const folder = dataFolder();
    const { secret, warnings } = resolveIn(folder);
    const file = join(folder, 'secret.key');
    expect(readFileSync(file, 'utf8')).toBe(`${secret}\n`);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(folder)).toEqual(['secret.key']);
    expect(warnings).toEqual([expect.stringContaining(file)]);
    expect(warnings.join('')).not.toContain(secret);

    // Every later start reuses it, silently.
    expect(resolveIn(folder)).toEqual({ secret, warnings: [] });
  });

  it('creates the data folder when it does not exist yet (a first start)', () => {
    const folder = join(dataFolder(), 'data');
    const { secret } = resolveIn(folder);
    expect(readFileSync(join(folder, 'secret.key'), 'utf8')).toBe(`${secret}\n`);
  });

  it('keeps the secret already there when a second start, racing the first, writes its own', () => {
    const folder = dataFolder();
    const file = join(folder, 'secret.key');
    const first = 'a'.repeat(64);
    expect(createSecretFile(file, first)).toBe(first);
    // The second start found no file a moment ago; by the time it links its own, there is one.
    expect(createSecretFile(file, 'b'.repeat(64))).toBe(first);
    expect(readFileSync(file, 'utf8')).toBe(`${first}\n`);
    expect(readdirSync(folder)).toEqual(['secret.key']);
  });

  it.each([
    ['empty', ''],
    ['only a newline', '\n'],
    ['cut short', 'a3f9c1\n'],
    ['31 characters', `${'b'.repeat(31)}\n`],
  ])('stops the start when the file is %s, saying which file, what is wrong and what to do', (_name, content) => {
    const folder = dataFolder();
    const file = join(folder, 'secret.key');
    writeFileSync(file, content, { mode: 0o600 });
    let error: Error | undefined;
    try {
      resolveIn(folder);
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.message).toContain(file);
    expect(error?.message).toMatch(/shorter than 32 characters/);
    expect(error?.message).toMatch(/delete it/);
    expect(error?.message).toMatch(/restore it/);
    expect(error?.message).toMatch(/SECRET_KEY/);
    // The file is left as it was: deleting it is the operator's decision.
    expect(readFileSync(file, 'utf8')).toBe(content);
  });

  it('accepts a file of 32 characters or more that an operator put there', () => {
    const folder = dataFolder();
    const secret = 'operator-chosen-secret-of-32-chr';
    writeFileSync(join(folder, 'secret.key'), `${secret}\n`, { mode: 0o600 });
    expect(resolveIn(folder)).toEqual({ secret, warnings: [] });
  });
});
