// What every client command shares: the global flags, the SDK client they
// configure, output in text or JSON, and errors said plainly.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { DEFAULT_BASE_URL, Pausepoint, PausepointError } from '@pausepoint/sdk';

export const CLI_VERSION = '0.1.0';

/** A mistake in the command line: the command says so and shows its usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every client command takes. */
export const GLOBAL_OPTIONS = {
  'api-key': { type: 'string' },
  'base-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export const GLOBAL_HELP = `Global flags:
  --api-key KEY     API key (default: $PAUSEPOINT_API_KEY)
  --base-url URL    the service (default: $PAUSEPOINT_BASE_URL, else ${DEFAULT_BASE_URL})
  --json            machine-readable output on stdout
  -h, --help        this help`;

/** node:util parseArgs with the global flags added; mistakes become UsageErrors. */
export function parse<T extends Options>(args: string[], options: T) {
  const all = { ...GLOBAL_OPTIONS, ...options };
  try {
    return parseArgs({ args, options: all, allowPositionals: true, strict: true });
  } catch (error) {
    const [nodeMessage = ''] = (error as Error).message.split('\n');
    throw new UsageError(flagMistake(args, all) ?? nodeMessage);
  }
}

/**
 * The first mistake in the flags, said plainly (Node's own messages quote
 * unevenly and suggest `--` tricks). Undefined when none is recognised.
 */
function flagMistake(args: string[], options: Options): string | undefined {
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!option) return `unknown option ${token.rawName}`;
    if (option.type === 'boolean' && token.inlineValue) return `${token.rawName} takes no value`;
    if (option.type === 'string' && token.value === undefined) return `${token.rawName} needs a value`;
    if (option.type === 'string' && !token.inlineValue && token.value?.startsWith('-')) {
      return `${token.rawName} needs a value; to give one that starts with "-", write --${token.name}=${token.value}`;
    }
  }
  return undefined;
}

export interface GlobalValues {
  'api-key'?: string | undefined;
  'base-url'?: string | undefined;
}

export function clientFrom(values: GlobalValues): Pausepoint {
  const apiKey = values['api-key'] ?? process.env.PAUSEPOINT_API_KEY;
  if (!apiKey) throw new Error('No API key: set PAUSEPOINT_API_KEY or pass --api-key.');
  return new Pausepoint({
    apiKey,
    baseUrl: values['base-url'] ?? process.env.PAUSEPOINT_BASE_URL,
    userAgent: `pausepoint-cli/${CLI_VERSION}`,
  });
}

/** The mode of a key, from its prefix, for messages. */
export function modeOfKey(values: GlobalValues): string {
  const key = values['api-key'] ?? process.env.PAUSEPOINT_API_KEY ?? '';
  return key.startsWith('svc_test_') ? 'test' : key.startsWith('svc_live_') ? 'live' : 'this key’s';
}

export const out = (line = '') => void process.stdout.write(`${line}\n`);
export const err = (line = '') => void process.stderr.write(`${line}\n`);
export const printJson = (value: unknown) => out(JSON.stringify(value, null, 2));

/** A list as the API gives it (what `--json` prints): up to `max` items, and whether more follow. */
export async function listObject<T>(
  list: { toArray(max?: number): Promise<T[]> },
  max = Number.POSITIVE_INFINITY,
): Promise<{ object: 'list'; data: T[]; has_more: boolean }> {
  const items = await list.toArray(max + 1);
  return { object: 'list', data: items.slice(0, max), has_more: items.length > max };
}

/** One line for a failure: the service's message, code, status and request id. */
export function describeError(error: unknown): string {
  if (error instanceof PausepointError) return `${error.message} (${factsOf(error)})`;
  return error instanceof Error ? error.message : String(error);
}

const factsOf = (error: PausepointError) =>
  [error.code, error.status === undefined ? undefined : `HTTP ${error.status}`, error.requestId]
    .filter(Boolean)
    .join(', ');

/**
 * A refusal naming several fields (a form's schema, typically), one field a
 * line: "refused (invalid_form, HTTP 400, req_…):" then "  FIELD PROBLEM".
 * Undefined for any other failure, said on one line by describeError.
 */
function describeFields(error: unknown): string | undefined {
  if (!(error instanceof PausepointError) || error.fields.length < 2) return undefined;
  const lines = error.fields.map(({ field, problem }) => `  ${field} ${problem}`);
  return [`refused (${factsOf(error)}):`, ...lines].join('\n');
}

/** The error as JSON for --json output. */
export function errorJson(error: unknown) {
  if (error instanceof PausepointError) {
    return {
      error: {
        code: error.code,
        message: error.message,
        status: error.status ?? null,
        request_id: error.requestId ?? null,
        ...(error.details ? { details: error.details } : {}),
      },
    };
  }
  return {
    error: {
      code: error instanceof UsageError ? 'usage' : 'error',
      message: (error as Error)?.message ?? String(error),
    },
  };
}

/** Reports a failure on stderr, or as JSON on stdout with --json. */
export function reportError(error: unknown, json: boolean | undefined, usage?: string): void {
  if (json) printJson(errorJson(error));
  else err(`pausepoint: ${describeFields(error) ?? describeError(error)}`);
  if (error instanceof UsageError && usage && !json) err(`\n${usage}`);
}

/** A plain-text table: columns padded to their widest cell. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Runs `work` with an AbortSignal that SIGINT and SIGTERM abort, and removes the handlers after. */
export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => controller.abort(Object.assign(new Error(name), { name: 'AbortError' }));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
