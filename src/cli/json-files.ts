// JSON a flag names by file, or `-` for standard input: read whole, within a
// size limit, and parsed, each failure said with the flag and the file.
import { open } from 'node:fs/promises';
import { formatBytes } from '../domain/units.js';

/** The most a JSON flag's file may hold: far above what the service takes (a form's schema is 16 KiB). */
export const MAX_JSON_FILE_BYTES = 1024 * 1024;

/** Reads and parses the JSON file `path` (`-`: standard input) given to `flag`. */
export async function readJsonFile(path: string, flag: string): Promise<unknown> {
  const name = path === '-' ? 'standard input' : path;
  let text: string;
  try {
    text = path === '-' ? await readLimited(process.stdin) : await readFileLimited(path);
  } catch (error) {
    throw new Error(`${flag}: cannot read ${name}: ${reasonOf(error)}`);
  }
  if (text.trim() === '') throw new Error(`${flag}: ${name} is empty; it should hold JSON`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${flag}: ${name} is not valid JSON: ${(error as Error).message}`);
  }
}

async function readFileLimited(path: string): Promise<string> {
  const file = await open(path, 'r');
  try {
    return await readLimited(file.createReadStream({ autoClose: false }));
  } finally {
    await file.close();
  }
}

async function readLimited(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > MAX_JSON_FILE_BYTES) throw new Error(`larger than ${formatBytes(MAX_JSON_FILE_BYTES)}`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
};

function reasonOf(error: unknown): string {
  const code = (error as { code?: string }).code;
  return (code && REASONS[code]) ?? (error as Error).message;
}
