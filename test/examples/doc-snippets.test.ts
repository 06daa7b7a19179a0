import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT, type RunningCli, startProcess } from '../cli/run-cli.js';
import { DOC_FILES, fencedBlocks, readDoc } from '../helpers/docs.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause, eventually } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// Every ts, js and sh block of the documentation (README.md, ARCHITECTURE.md,
// CONTRIBUTING.md and the guides and references in docs/) runs as written, against a real
// service, unless its info string marks it as a fragment (```ts fragment):
// a block that is neither marked nor runs fails here. A person answers every
// response link a block prints, as someone reading its output would. Shell
// blocks run with what the quick start sets (the `field` helper,
// PAUSEPOINT_API_KEY, PAUSE_ID: a pending pause); TypeScript blocks run under
// tsx from the repository, where @pausepoint/sdk is the `sdk` workspace.

const README = readDoc('README.md');
const RUNNABLE = new Set(['sh', 'bash', 'ts', 'typescript', 'js', 'javascript']);
const MARKS = new Set(['fragment']);
const WORK = join(ROOT, 'test-artifacts', 'doc-snippets');

interface Block {
  file: string;
  line: number;
  lang: string;
  marks: string[];
  code: string;
}

const codeBlocks = (file: string): Block[] => fencedBlocks(readDoc(file)).map((block) => ({ file, ...block }));

const blocks = DOC_FILES.flatMap(codeBlocks).filter((block) => RUNNABLE.has(block.lang));
const runnable = blocks.filter((block) => !block.marks.includes('fragment'));
const label = (block: Block) => `${block.file}:${block.line} (${block.lang}) ${block.code.split('\n')[0]}`;
/** A file name for a block's script, unique across the documentation. */
const scriptName = (block: Block) => `${block.file.replace(/\W+/g, '-')}-${block.line}.mts`;

let service: TestService;
beforeAll(async () => {
  // Localhost is an allowed outbound address only for hosts this machine cannot resolve (see offline()).
  service = await startTestService({ env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } });
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
});
afterAll(async () => {
  await service?.destroy();
  rmSync(WORK, { recursive: true, force: true });
});

describe('documentation code blocks', () => {
  it('are all runnable or marked as fragments, with no other mark', () => {
    expect(blocks.length).toBeGreaterThan(10);
    for (const block of blocks) {
      for (const mark of block.marks) expect(MARKS.has(mark), `${label(block)}: mark "${mark}"`).toBe(true);
    }
    // The quick start, the SDK and the agents' snippets are among those run.
    const code = runnable.map((block) => block.code).join('\n');
    for (const used of ['pausepoint.ask(', 'guardTool(', 'runWithApprovals(', 'reviewers:', '?wait=60']) {
      expect(code).toContain(used);
    }
  });

  it('typecheck, the TypeScript ones (strict)', { timeout: 240_000 }, async () => {
    const dir = join(WORK, 'typecheck');
    mkdirSync(dir, { recursive: true });
    const files = runnable
      .filter((block) => block.lang === 'ts' || block.lang === 'typescript')
      .map((block) => {
        const file = join(dir, scriptName(block));
        writeFileSync(file, block.code);
        return file;
      });
    expect(files.length).toBeGreaterThan(2);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck'];
    const result = await startProcess(process.execPath, [tsc, ...options, '--types', 'node', ...files], {
      env: cleanEnv(),
      cwd: ROOT,
    }).exited;
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it.each(runnable.map((block) => [label(block), block] as const))(
    '%s runs as written',
    { timeout: 150_000 },
    async (_, block) => {
      // Not run: a block that would install, build or serve from this checkout must be a fragment.
      expect(block.code, 'installs, builds or serves: mark it as a fragment').not.toMatch(
        /\bnpm (ci|install|start|test|run)\b/,
      );
      const account = await registerAccount(service.url);
      const script = await offline(block.code.replaceAll(/(localhost|127\.0\.0\.1):3000/g, new URL(service.url).host));
      if (/\.listen\(\{ port: \d+ \}\)/.test(script)) return runServer(block, script);

      const running =
        block.lang === 'sh' || block.lang === 'bash'
          ? await runShell(script, account)
          : runScript(block, script, account);
      const answered = answerLinks(running);
      let result: Awaited<RunningCli['exited']>;
      try {
        // A block that asks a person must say where to answer, not wait in silence.
        if (ASKS.test(block.code)) await running.waitFor(/\/r\/\S+/, undefined, 60_000);
        result = await running.exited;
      } finally {
        running.child.kill();
        await answered.stop();
      }
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.code, output).toBe(0);
      expect(result.stderr).toBe('');
      // curl -s exits 0 whatever the status: an error body is a failure too.
      expect(result.stdout).not.toMatch(/"error":\s*\{"code"/);
      if (ASKS.test(block.code)) {
        // It printed where to answer, and the person's answer is what it went on with.
        expect(answered.links.length, output).toBeGreaterThan(0);
        expect(result.stdout).not.toMatch(/not_run|Not deploying/);
      }
      // What the block prints once the person has approved.
      for (const [code, printed] of OUTCOMES)
        if (block.code.includes(code)) expect(result.stdout, output).toMatch(printed);
    },
  );
});

/** Blocks that ask a person. */
const ASKS = /\.ask\(|guardTool\(|runWithApprovals\(/;

/** Blocks that show an approved outcome, by a line of their code, and what they print then. */
const OUTCOMES: [string, RegExp][] = [
  ['await deploy()', /^Deploying v2/m],
  ['quorum: 2', /^approve \{/m],
  ['guardTool(', /refunded: 129\.5/],
  ['runWithApprovals(', /Restarted api\./],
  ['field response_url', /"status":"responded"/],
];

/** The quick start's `field` helper, taken from the README itself. */
function fieldHelper(): string {
  const line = README.split('\n').find((text) => text.startsWith('field() {'));
  expect(line, 'the quick start defines field()').toBeDefined();
  return line!;
}

async function runShell(script: string, account: Account): Promise<RunningCli> {
  const waiting = await createPause(service.url, account.test, { title: 'The quick start’s PAUSE_ID' });
  const prelude = [fieldHelper(), `export PAUSEPOINT_API_KEY=${account.test}`, `PAUSE_ID=${waiting.id}`].join('\n');
  const running = startProcess('bash', ['-euo', 'pipefail', '-c', `${prelude}\n${script}`], {
    env: cleanEnv(),
    cwd: WORK,
  });
  // The quick start's pause, answered by its person: a block that waits on PAUSE_ID goes on.
  await call(service.url, 'POST', `/v1/respond/${tokenOfUrl(waiting.response_url)}`, { body: { choice: 'approve' } });
  return running;
}

function runScript(block: Block, script: string, account: Account): RunningCli {
  const file = join(WORK, scriptName(block));
  writeFileSync(file, script);
  return startProcess(process.execPath, ['--import', import.meta.resolve('tsx'), file], {
    env: cleanEnv({ PAUSEPOINT_API_KEY: account.test, PAUSEPOINT_BASE_URL: service.url }),
    cwd: ROOT,
  });
}

/**
 * A block that serves (the webhook receiver): started on a port of its own
 * choosing (port 0, the address it prints; a port found free beforehand may
 * be taken by then), sent a signed delivery, its repeat and a forgery, then
 * stopped.
 */
async function runServer(block: Block, script: string) {
  const secret = 'whsec_readme_snippet_secret';
  const file = join(WORK, scriptName(block));
  const listening = script.replace(
    /await app\.listen\(\{ port: \d+ \}\);/,
    "console.log('listening at ' + (await app.listen({ port: 0 })));",
  );
  expect(listening).not.toBe(script);
  writeFileSync(file, listening);
  const running = startProcess(process.execPath, ['--import', import.meta.resolve('tsx'), file], {
    env: cleanEnv({ PAUSEPOINT_WEBHOOK_SECRET: secret }),
    cwd: ROOT,
  });
  try {
    const path = /app\.post\('([^']+)'/.exec(script)?.[1] ?? '/';
    let url = '';
    await eventually(
      () => {
        const address = /listening at (http:\/\/\S+)/.exec(running.stdout)?.[1];
        if (address === undefined) throw new Error(`the receiver has not started: ${running.stderr}`);
        url = `${address}${path}`;
      },
      60_000,
      100,
    );
    const body = JSON.stringify({ event: 'pause.responded', pause_id: 'pause_x', data: { choice: 'approve' } });
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const deliver = (sign: string, id: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign, 'x-service-delivery': id },
        body,
      }).then((reply) => reply.status);
    let first = 0;
    await eventually(
      async () => {
        first = await deliver(signature, 'dlv_1');
      },
      60_000,
      250,
    );
    expect(first).toBe(204);
    expect(await deliver(signature, 'dlv_1')).toBe(200); // a repeat
    expect(await deliver(`sha256=${'0'.repeat(64)}`, 'dlv_2')).toBe(401);
    expect(running.stderr).toBe('');
  } finally {
    running.child.kill();
    await running.exited;
  }
}

/**
 * The person: answers each response link the block prints, once, with its
 * first option. Links of a decided pause (a quorum reached) are refused, as
 * for anyone who answers late.
 */
function answerLinks(running: RunningCli) {
  const links: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const text = `${running.stdout}\n${running.stderr}`;
      for (const [link] of text.matchAll(/https?:\/\/[^\s"'`]+\/r\/[A-Za-z0-9._~-]+/g)) {
        if (links.includes(link)) continue;
        links.push(link);
        const token = tokenOfUrl(link);
        const question = await call(service.url, 'GET', `/v1/respond/${token}`);
        if (question.body?.status !== 'pending') continue;
        const reply = await call(service.url, 'POST', `/v1/respond/${token}`, {
          body: { choice: question.body.options[0] },
        });
        expect([200, 409], reply.text).toContain(reply.status);
      }
      await Promise.race([running.exited, new Promise((resolve) => setTimeout(resolve, 100))]);
      if (running.child.exitCode !== null || running.child.signalCode !== null) break;
    }
  })();
  return {
    links,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

const tokenOfUrl = (link: string) => new URL(link).pathname.replace(/^\/r\//, '');

/**
 * On a machine without DNS, an https URL whose host does not resolve points
 * at 127.0.0.1 instead (an allowed address for this service), so the service
 * accepts it as it would where the name resolves; test keys send nothing.
 */
async function offline(script: string): Promise<string> {
  let result = script;
  for (const host of new Set([...script.matchAll(/https:\/\/([a-z0-9.-]+\.[a-z]+)[/"']/g)].map((m) => m[1]!))) {
    const resolves = await lookup(host).then(
      () => true,
      () => false,
    );
    if (!resolves) result = result.replaceAll(`https://${host}`, 'https://127.0.0.1');
  }
  return result;
}
