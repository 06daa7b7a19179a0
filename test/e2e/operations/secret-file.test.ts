import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// What an operator sees when the secret file in the data folder is empty (a
// full disk at the first start): the process refuses to start and says why,
// rather than signing response links with an empty secret. The rules
// themselves are tested in test/unit/secret-file.test.ts.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const folder = mkdtempSync(join(tmpdir(), 'pausepoint-secret-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('a pausepoint process over an empty secret file', () => {
  it('exits 1 at start with the message on stderr, before creating the database', async () => {
    writeFileSync(join(folder, 'secret.key'), '', { mode: 0o600 });
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        DATABASE_URL: `sqlite:${join(folder, 'pausepoint.db')}`,
        PORT: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.resume();
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    // A start that does not refuse the file would serve on: give it 50 s to fail, then stop it.
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await exited.finally(() => clearTimeout(timer));
    expect(code, stderr).toBe(1);
    expect(stderr).toContain('pausepoint: failed to start:');
    expect(stderr).toContain(join(folder, 'secret.key'));
    expect(stderr).toMatch(/shorter than 32 characters/);
    expect(existsSync(join(folder, 'pausepoint.db'))).toBe(false);
  }, 60_000);
});
