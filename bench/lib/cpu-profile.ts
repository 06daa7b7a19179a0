// Summarises a V8 .cpuprofile (node --cpu-prof): where the samples landed,
// by function and by package, as shares of the samples taken while busy.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from './harness.js';
import { table } from './report.js';

/**
 * Where the service's .cpuprofile goes for a --cpu-prof flag's value: a temp
 * folder removed at the end for a bare --cpu-prof, the folder named by
 * --cpu-prof=<dir> (kept), none without the flag.
 */
export function profileDirectory(flag: string | undefined): string | undefined {
  if (flag === undefined) return undefined;
  if (flag === 'true') return tempDir('pausepoint-cpuprof');
  const dir = resolve(flag);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The node flags that profile into `dir`. */
export const profileArgs = (dir: string | undefined) => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
}

/** Where a script lives, shortened: a package name, a file under dist/, or a node: module. */
function origin(url: string): string {
  if (url === '') return '(native / VM)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '');
}

export function summariseProfiles(dir: string, top = 20): string {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) return `no .cpuprofile was written in ${dir}`;
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  /** Samples with the function anywhere on the (synchronous) stack, for the service's own code. */
  const inclusive = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    for (const node of profile.nodes) {
      const hits = node.hitCount ?? 0;
      if (hits === 0) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      if (functionName === '(idle)') {
        idle += hits;
        continue;
      }
      busy += hits;
      const where = origin(url);
      const name = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
      const group = functionName.startsWith('(') ? functionName : where;
      byOrigin.set(group, (byOrigin.get(group) ?? 0) + hits);
    }
    addInclusive(profile, inclusive);
  }
  const share = (hits: number) => `${((hits / busy) * 100).toFixed(1)}%`;
  const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `${busy + idle} samples, ${((idle / Math.max(1, busy + idle)) * 100).toFixed(1)}% idle; shares below are of the busy samples.`,
    '',
    'Top self time by function:',
    table(
      ['self', 'function  origin:line'],
      sorted(byFunction).map(([name, hits]) => [share(hits), name]),
    ),
    '',
    'Self time by package / file:',
    table(
      ['self', 'origin'],
      sorted(byOrigin).map(([name, hits]) => [share(hits), name]),
    ),
    '',
    "The service's own functions (dist/) by total time: self plus what they call synchronously",
    '(time after an await is not counted under the caller):',
    table(
      ['total', 'function  origin:line'],
      sorted(inclusive).map(([name, hits]) => [share(hits), name]),
    ),
  ].join('\n');
}

/** For each busy sample, one count for every distinct dist/ function on its stack. */
function addInclusive(profile: Profile, into: Map<string, number>): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (
      let id: number | undefined = node.id, depth = 0;
      id !== undefined && depth < 500;
      id = parent.get(id), depth++
    ) {
      const frame = byId.get(id)?.callFrame;
      if (frame?.url.includes('/dist/') && !frame.url.includes('/node_modules/')) {
        seen.add(`${frame.functionName || '(anonymous)'}  ${origin(frame.url)}:${frame.lineNumber + 1}`);
      }
    }
    for (const key of seen) into.set(key, (into.get(key) ?? 0) + hits);
  }
}
