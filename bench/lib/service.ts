// The service under test: built once with `npm run build`, run as its own
// process (node dist/main.js serve) over a throwaway database, so the load
// generator in the benchmark process never shares its event loop.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { responseToken, reviewerToken } from '../../src/domain/response-token.js';
import { deriveServiceKeys } from '../../src/secrets.js';
import { type Child, freePort, onCleanup, startChild, tempDir } from './harness.js';
import { machineSummary } from './report.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the built service lives: this checkout, or a snapshot of BENCH_REF. */
let serviceRoot = ROOT;
let serviceSource = 'the working tree';

/**
 * `npm run build` here, unless BENCH_SKIP_BUILD=1 (the runner builds once
 * for all three). With BENCH_REF=<commit> (e.g. HEAD) the service is instead
 * built from that commit's files, extracted with `git archive` into a temp
 * folder beside this checkout's node_modules, so work in progress in src/
 * neither breaks the build nor slips into the figures. BENCH_SERVICE_DIR=<dir>
 * runs <dir>/dist/main.js as already built.
 */
export function buildService(): void {
  const prebuilt = process.env.BENCH_SERVICE_DIR;
  if (prebuilt) {
    // A build made elsewhere (say a patched copy, to try a fix): used as it is.
    serviceRoot = prebuilt;
    serviceSource = `the prebuilt ${join(prebuilt, 'dist/main.js')} (BENCH_SERVICE_DIR)`;
    return;
  }
  const ref = process.env.BENCH_REF;
  if (ref) {
    const commit = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    const dir = tempDir('pausepoint-bench-src');
    // The workspace packages (sdk/) come too when the commit has them: npm run build builds them first.
    const paths = [
      'src',
      'sdk',
      'jsx',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
    ].filter((path) =>
      execFileSync('git', ['ls-tree', '--name-only', commit, path], { cwd: ROOT, encoding: 'utf8' }).trim(),
    );
    const archive = execFileSync('git', ['archive', '--format=tar', commit, ...paths], {
      cwd: ROOT,
      maxBuffer: 256 * 2 ** 20,
    });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    linkModules(dir);
    console.log(`building the service at commit ${commit} (npm run build in ${dir})…`);
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`npm run build of ${commit} failed (exit ${build.status})`);
    serviceRoot = dir;
    serviceSource = `commit ${commit} (BENCH_REF=${ref})`;
    return;
  }
  if (process.env.BENCH_SKIP_BUILD === '1') return;
  console.log('building the service (npm run build)…');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status})`);
}

/**
 * The commit's node_modules: this checkout's packages, linked one by one,
 * except the workspace packages (@pausepoint/sdk, jsx), which are the
 * commit's own. One link to the whole folder would build the commit against
 * this checkout's SDK, whose types may have moved on.
 */
function linkModules(dir: string): void {
  const modules = join(ROOT, 'node_modules');
  mkdirSync(join(dir, 'node_modules', WORKSPACE_SCOPE), { recursive: true });
  for (const entry of readdirSync(modules)) {
    if (entry !== WORKSPACE_SCOPE) symlinkSync(join(modules, entry), join(dir, 'node_modules', entry));
  }
  // npm's workspace links are relative (../../sdk): made again inside the commit's tree, they point at its folders.
  for (const name of readdirSync(join(modules, WORKSPACE_SCOPE))) {
    symlinkSync(readlinkSync(join(modules, WORKSPACE_SCOPE, name)), join(dir, 'node_modules', WORKSPACE_SCOPE, name));
  }
}

const WORKSPACE_SCOPE = '@pausepoint';

/** What the running service was built from, for the printed summary. */
export const builtFrom = () =>
  [
    serviceSource,
    Object.keys(serviceStartEnv()).length > 0
      ? `with ${Object.entries(serviceStartEnv())
          .map(([name, value]) => `${name}=${value}`)
          .join(' ')}`
      : '',
    serviceNodeArgs().length > 0 ? `run with node ${serviceNodeArgs().join(' ')}` : '',
    process.env.MALLOC_ARENA_MAX ? `MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}` : '',
  ]
    .filter(Boolean)
    .join(', ');

export interface BenchDatabase {
  kind: 'sqlite' | 'postgres';
  url: string;
  /** The SQLite file, for the summary. */
  description: string;
}

/**
 * A fresh database, removed at cleanup: a SQLite file in a temp folder, or
 * with `postgres` a new database pausepoint_bench_<random> on the server at
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
export async function freshDatabase(postgres: boolean): Promise<BenchDatabase> {
  if (!postgres) {
    const dir = tempDir('pausepoint-bench');
    const path = join(dir, 'pausepoint.db');
    return { kind: 'sqlite', url: `sqlite:${path}`, description: `SQLite file ${path}` };
  }
  const adminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `pausepoint_bench_${randomBytes(5).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${name}`));
  onCleanup(async () => {
    await withAdmin(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', url: url.toString(), description: `PostgreSQL database ${name}` };
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** One secret per benchmark run, so restarts over the same database agree. */
const SECRET_KEY = randomBytes(32).toString('hex');
const RESPOND_TOKEN_KEY = deriveServiceKeys(SECRET_KEY).respondToken;

/** The token of a pause's response_url, as the services this script starts make it. */
export const responseTokenFor = (pauseId: string): string => responseToken(RESPOND_TOKEN_KEY, pauseId);

/** A reviewer's own token (their response_url's), as the services this script starts make it. */
export const reviewerTokenFor = (pauseId: string, reviewerId: string): string =>
  reviewerToken(RESPOND_TOKEN_KEY, pauseId, reviewerId);

export type ServiceProcess = Child;

/** How `npm start` runs the service (package.json of the code measured): its environment assignments and node flags. */
function startCommand(): { env: Record<string, string>; nodeFlags: string[] } {
  const manifest = JSON.parse(readFileSync(join(serviceRoot, 'package.json'), 'utf8'));
  const start: string = manifest.scripts?.start ?? '';
  const [, assignments = '', flags = ''] =
    /((?:\b[A-Z_]+=\S+\s+)*)node((?:\s+--\S+)*)\s+dist\/main\.js/.exec(start) ?? [];
  const env = Object.fromEntries(
    assignments
      .split(/\s+/)
      .filter(Boolean)
      .map((assignment) => [
        assignment.slice(0, assignment.indexOf('=')),
        assignment.slice(assignment.indexOf('=') + 1),
      ]),
  );
  return { env, nodeFlags: flags.split(/\s+/).filter(Boolean) };
}

/**
 * The node flags `npm start` runs the service with, then any from
 * BENCH_NODE_ARGS (space-separated), to try runtime tuning such as
 * --max-semi-space-size=4 without touching src/.
 */
export function serviceNodeArgs(): string[] {
  return [...startCommand().nodeFlags, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ')].filter(Boolean);
}

/** The environment `npm start` sets for the service (such as MALLOC_MMAP_THRESHOLD_). */
export const serviceStartEnv = (): Record<string, string> => startCommand().env;

/** node [BENCH_NODE_ARGS] [nodeArgs] dist/main.js serve on a free port, ready once /health answers. */
export async function startService(options: {
  database: BenchDatabase;
  nodeArgs?: string[];
  env?: Record<string, string>;
}): Promise<ServiceProcess> {
  const port = await freePort();
  return startChild({
    name: 'pausepoint',
    command: process.execPath,
    args: [...serviceNodeArgs(), ...(options.nodeArgs ?? []), join(serviceRoot, 'dist/main.js'), 'serve'],
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: options.database.url,
      SECRET_KEY,
      // BENCH_LOG_LEVEL=info measures the default level's request logging too.
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      // The per-key limits stay in the path (their bookkeeping is part of the
      // cost) but far above what a benchmark sends; older builds ignore them.
      AUTH_RATE_LIMIT: '100000/60',
      API_RATE_LIMIT: '100000000/60',
      RESPOND_RATE_LIMIT: '100000000/60',
      SEARCH_RATE_LIMIT: '100000000/60',
      ROLE: 'all',
      ...serviceStartEnv(),
      ...options.env,
    },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/health',
    timeoutMs: 60_000,
  });
}

export interface Account {
  developerId: string;
  email: string;
  password: string;
  testKey: string;
  liveKey: string;
}

/** POST /v1/auth/register with a fresh email. */
export async function register(baseUrl: string): Promise<Account> {
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'benchmark-password';
  const response = await fetch(`${baseUrl}/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { developer?: { id: string }; keys?: { live: string; test: string } };
  if (response.status !== 201 || !body.developer || !body.keys) {
    throw new Error(`register answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { developerId: body.developer.id, email, password, testKey: body.keys.test, liveKey: body.keys.live };
}

/** POST /v1/pause once, checked. */
export async function createPause(baseUrl: string, key: string, body: object): Promise<{ id: string }> {
  const response = await fetch(`${baseUrl}/v1/pause`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST /v1/pause answered ${response.status}: ${text}`);
  return JSON.parse(text) as { id: string };
}

/**
 * The usual start of a benchmark: its heading and the machine's state, the
 * build, a fresh database, the service running over it and one registered
 * account, each printed.
 */
export async function setUpService(heading: string, postgres: boolean, env: Record<string, string> = {}) {
  console.log(heading);
  console.log(await machineSummary());
  buildService();
  console.log(`service built from ${builtFrom()}`);
  const database = await freshDatabase(postgres);
  const service = await startService({ database, env });
  const account = await register(service.url);
  console.log(`service pid ${service.pid} on ${service.url} over ${database.description}`);
  return { database, service, account };
}
