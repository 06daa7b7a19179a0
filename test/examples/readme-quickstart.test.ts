import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanEnv, ROOT, startProcess } from '../cli/run-cli.js';
import { DOC_FILES, fencedBlocks, readDoc } from '../helpers/docs.js';
import { call } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The README's quick start, copied out of the README and run with bash
// against a real service, a person answering the response link meanwhile.
// And every shell example's variables, in the README and the guides it links
// to, are the ones the quick start sets.
vi.setConfig({ testTimeout: 90_000 });

const README = readDoc('README.md');

/** The ```sh blocks of one of the README's `## ` sections, or of all the documentation. */
function shellBlocks(section?: string): string[] {
  let texts = DOC_FILES.map(readDoc);
  if (section) {
    const start = README.indexOf(`\n## ${section}\n`);
    expect(start, `README section "${section}"`).toBeGreaterThan(-1);
    const end = README.indexOf('\n## ', start + 1);
    texts = [README.slice(start, end === -1 ? undefined : end)];
  }
  return texts.flatMap((text) => fencedBlocks(text).filter((block) => block.lang === 'sh')).map((block) => block.code);
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.destroy());

describe('README quick start', () => {
  it('starts with the two commands, to serve and to test', () => {
    const [commands] = shellBlocks('Quick start');
    const lines = commands!.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^npm ci && npm start\s/);
    expect(lines[1]).toMatch(/^npm ci && npm test\s/);
  });

  it('runs end to end as written: register, ask, answer, and the wait returns the answer', async () => {
    const [, walkthrough] = shellBlocks('Quick start');
    expect(walkthrough).toContain('localhost:3000');
    const script = walkthrough!.replaceAll('localhost:3000', new URL(service.url).host);
    // -u and pipefail: an unset variable or a failed step fails the run.
    const running = startProcess('bash', ['-euo', 'pipefail', '-c', script], { env: cleanEnv(), cwd: ROOT });

    // The person: opens the link the script printed and answers.
    const [, link] = await running.waitFor(/^(http:\/\/\S+\/r\/\S+)$/m, 'stdout', 60_000);
    const token = new URL(link!).pathname.replace(/^\/r\//, '');
    const answer = await call(service.url, 'POST', `/v1/respond/${token}`, { body: { choice: 'approve' } });
    expect(answer.status, answer.text).toBe(200);

    const result = await running.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const [account, , waited] = result.stdout.trimEnd().split('\n');
    expect(JSON.parse(account!).keys.test).toMatch(/^svc_test_/);
    expect(JSON.parse(waited!)).toMatchObject({
      id: token.split('.')[0],
      mode: 'test',
      status: 'responded',
      response: { choice: 'approve' },
    });
  });

  it('sets every variable that the documentation’s shell examples use', () => {
    const blocks = shellBlocks();
    const assigned = new Set(
      blocks.flatMap((block) => [...block.matchAll(/^(?:export )?([A-Z_]+)=/gm)].map((m) => m[1])),
    );
    const used = new Set(blocks.flatMap((block) => [...block.matchAll(/\$\{?([A-Z_]+)/g)].map((m) => m[1])));
    expect([...used].filter((name) => !assigned.has(name))).toEqual([]);
    expect(assigned).toContain('PAUSEPOINT_API_KEY');
    expect(assigned).toContain('PAUSE_ID');
  });
});
