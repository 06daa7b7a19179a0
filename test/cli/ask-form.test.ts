import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { type RunningCli, runCli, startCli } from './run-cli.js';

// `pausepoint ask --form`: a real process against a real service, a person
// answering through the respond API. With a form, stdout is the values as
// JSON (for jq) and the outcome in words goes to stderr.

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let dev: Account;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'pausepoint-ask-form-'));

const SCHEMA = {
  type: 'object',
  properties: {
    amount: { type: 'number', title: 'Amount', maximum: 500 },
    reason: { type: 'string', enum: ['lost', 'damaged'] },
  },
  required: ['amount'],
};

/** Writes `content` (JSON unless a string) to a file in the test's folder, and returns its path. */
function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  env = { PAUSEPOINT_API_KEY: dev.test, PAUSEPOINT_BASE_URL: service.url };
});
afterAll(async () => {
  await service?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Answers the pause `ask` asks, through the link it prints on stderr; returns the pause as the service has it. */
async function answer(cli: RunningCli, body: Record<string, unknown>) {
  const [, url] = await cli.waitFor(/Answer at: (\S+)/, 'stderr');
  const token = new URL(url!).pathname.replace(/^\/r\//, '');
  const question = await call(service.url, 'GET', `/v1/respond/${token}`);
  const reply = await call(service.url, 'POST', `/v1/respond/${token}`, { body });
  expect(reply.status, reply.text).toBe(200);
  return question.body;
}

describe('ask --form', () => {
  it('sends the schema and the proposed values, and prints the values answered as JSON on stdout', async () => {
    const cli = startCli(
      [
        'ask',
        'Refund order 1234?',
        '--form',
        file('schema.json', SCHEMA),
        '--values',
        file('values.json', { amount: 420 }),
      ],
      env,
    );
    const question = await answer(cli, { choice: 'approve', values: { amount: 300, reason: 'damaged' } });
    expect(question.form).toEqual({ schema: SCHEMA, values: { amount: 420 }, on: ['approve', 'reject'] });
    const result = await cli.exited;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ amount: 300, reason: 'damaged' });
    expect(result.stderr).toMatch(/^Answered: approve, values edited$/m);
  });

  it('reads the schema from stdin, and prints null for a choice that submits no values', async () => {
    const cli = startCli(
      [
        'ask',
        'Refund?',
        '--form',
        '-',
        '--values',
        file('fifty.json', { amount: 50 }),
        '--form-on',
        'approve',
        '--require-text',
        'reject',
      ],
      env,
      JSON.stringify(SCHEMA),
    );
    const question = await answer(cli, { choice: 'reject', text: 'Too much' });
    expect(question).toMatchObject({ form: { values: { amount: 50 }, on: ['approve'] }, require_text: ['reject'] });
    const result = await cli.exited;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('null\n');
    expect(result.stderr).toMatch(/^Answered: reject \("Too much"\)$/m);
  });

  it('adds the values and whether they were edited to --json', async () => {
    const cli = startCli(
      ['ask', 'Refund?', '--json', '--form', file('schema.json', SCHEMA), '--values', '-'],
      env,
      '{"amount": 12}',
    );
    await answer(cli, { choice: 'approve' });
    const result = await cli.exited;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: 'responded',
      choice: 'approve',
      values: { amount: 12 },
      edited: false,
      exit_code: 0,
    });
  });

  it('prints the outcome as before without --form, values null in --json', async () => {
    const cli = startCli(['ask', 'No form?', '--json'], env);
    await answer(cli, { choice: 'approve' });
    const result = await cli.exited;
    expect(JSON.parse(result.stdout)).toMatchObject({ choice: 'approve', values: null, edited: false });
  });
});

describe('ask --form errors (exit 3, nothing on stdout)', () => {
  it('says which file could not be read or is not JSON', async () => {
    const schema = file('schema.json', SCHEMA);
    const [missing, notJson, empty, directory] = await Promise.all([
      runCli(['ask', 'Q?', '--form', join(dir, 'nowhere.json')], env),
      runCli(['ask', 'Q?', '--form', schema, '--values', file('broken.json', '{"amount": 1,}')], env),
      runCli(['ask', 'Q?', '--form', file('empty.json', '  \n')], env),
      runCli(['ask', 'Q?', '--form', dir], env),
    ]);
    expect(missing.stderr).toBe(`pausepoint: --form: cannot read ${join(dir, 'nowhere.json')}: no such file\n`);
    expect(notJson.stderr).toMatch(/^pausepoint: --values: \S+broken\.json is not valid JSON: .*position 13/);
    expect(empty.stderr).toMatch(/^pausepoint: --form: \S+empty\.json is empty; it should hold JSON\n$/);
    expect(directory.stderr).toBe(`pausepoint: --form: cannot read ${dir}: it is a directory\n`);
    for (const result of [missing, notJson, empty, directory]) {
      expect(result.code).toBe(3);
      expect(result.stdout).toBe('');
    }
  });

  it('refuses flags that go with --form without it, and stdin for both files', async () => {
    const [valuesAlone, onAlone, bothStdin] = await Promise.all([
      runCli(['ask', 'Q?', '--values', file('values.json', { amount: 1 })], env),
      runCli(['ask', 'Q?', '--form-on', 'approve'], env),
      runCli(['ask', 'Q?', '--form', '-', '--values', '-'], env),
    ]);
    expect(valuesAlone.stderr).toMatch(/^pausepoint: --values goes with --form\n\nUsage: pausepoint ask/);
    expect(onAlone.stderr).toMatch(/^pausepoint: --form-on goes with --form\n/);
    expect(bothStdin.stderr).toMatch(/^pausepoint: --form and --values cannot both read stdin/);
    for (const result of [valuesAlone, onAlone, bothStdin]) expect(result.code).toBe(3);
  });

  it('lists the service’s invalid_form problems one field a line', async () => {
    const bad = {
      type: 'object',
      properties: { code: { $ref: 'https://example.com/code.json' }, phone: { type: 'string', format: 'phone' } },
    };
    const result = await runCli(['ask', 'Q?', '--form', file('bad.json', bad)], env);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^pausepoint: refused \(invalid_form, HTTP 400, req_\w+\):$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}form\.schema\.properties\.code\.\$ref may only refer within the schema/),
      '  form.schema.properties.phone.format must be one of email, uri, date, date-time',
    ]);
  });

  it('shows the service’s refusal of values that do not fit the schema', async () => {
    const result = await runCli(
      ['ask', 'Q?', '--form', file('schema.json', SCHEMA), '--values', file('over.json', { amount: 900 })],
      env,
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^pausepoint: .*form\.values\.amount.*\(invalid_form, HTTP 400, req_\w+\)\n$/);
  });
});
