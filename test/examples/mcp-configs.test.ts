import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanEnv, pausepointOnPath, ROOT, startProcess } from '../cli/run-cli.js';
import { type Account, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The MCP client configurations in examples/mcp/: each parses, names the
// `pausepoint mcp` command (or the /mcp URL), and works when started the way
// its client starts it, with the placeholders filled in.

vi.setConfig({ testTimeout: 60_000 });

const EXAMPLES = join(ROOT, 'examples/mcp');
const PLACEHOLDER_KEY = 'svc_test_REPLACE_WITH_YOUR_KEY';
const PLACEHOLDER_URL = 'http://127.0.0.1:3000';
const TOOLS = ['ask_human', 'cancel_question', 'list_pending_questions', 'wait_for_human'];

interface StdioEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

const configOf = (file: string) => JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')).mcpServers.pausepoint;

let service: TestService;
let dev: Account;
let bin: ReturnType<typeof pausepointOnPath>;
const clients: Client[] = [];

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  bin = pausepointOnPath();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  bin?.remove();
  await service?.destroy();
});

/** The placeholders replaced by this test's key and service. */
const filledIn = (text: string) => text.replaceAll(PLACEHOLDER_KEY, dev.test).replaceAll(PLACEHOLDER_URL, service.url);

async function toolsOf(client: Client): Promise<string[]> {
  clients.push(client);
  const { tools } = await client.listTools();
  return tools.map((tool) => tool.name).sort();
}

describe('examples/mcp', () => {
  it('the Claude Desktop and Cursor configurations run `pausepoint mcp` with the key and service', async () => {
    const desktop: StdioEntry = configOf('claude_desktop_config.json');
    expect(desktop).toEqual({
      command: 'pausepoint',
      args: ['mcp'],
      env: { PAUSEPOINT_API_KEY: PLACEHOLDER_KEY, PAUSEPOINT_BASE_URL: PLACEHOLDER_URL },
    });
    expect(configOf('cursor-mcp.json')).toEqual(desktop);

    // Started as Claude Desktop starts it: the command on PATH, the env of the entry.
    const env = Object.fromEntries(Object.entries(desktop.env).map(([name, value]) => [name, filledIn(value)]));
    const transport = new StdioClientTransport({
      command: desktop.command,
      args: desktop.args,
      env: cleanEnv({ ...env, PATH: `${bin.dir}:${process.env.PATH}` }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'claude-desktop-like', version: '1.0.0' });
    await client.connect(transport);
    expect(await toolsOf(client)).toEqual(TOOLS);
    const listed = await client.callTool({ name: 'list_pending_questions', arguments: {} });
    expect(listed.isError).toBeFalsy();
  });

  it('claude-code.sh adds the same command to Claude Code', async () => {
    // A stand-in `claude` that records what it was asked to do.
    const dir = mkdtempSync(join(tmpdir(), 'fake-claude-'));
    const record = join(dir, 'args.json');
    try {
      writeFileSync(
        join(dir, 'claude'),
        `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)));\n`,
      );
      chmodSync(join(dir, 'claude'), 0o755);
      const run = startProcess('bash', [join(EXAMPLES, 'claude-code.sh')], {
        env: cleanEnv({
          PAUSEPOINT_API_KEY: dev.test,
          PAUSEPOINT_BASE_URL: service.url,
          PATH: `${dir}:${process.env.PATH}`,
        }),
        cwd: ROOT,
      });
      expect((await run.exited).code).toBe(0);
      const args: string[] = JSON.parse(readFileSync(record, 'utf8'));
      expect(args).toEqual([
        'mcp',
        'add',
        '--transport',
        'stdio',
        '--env',
        `PAUSEPOINT_API_KEY=${dev.test}`,
        '--env',
        `PAUSEPOINT_BASE_URL=${service.url}`,
        'pausepoint',
        '--',
        'pausepoint',
        'mcp',
      ]);
      const desktop: StdioEntry = configOf('claude_desktop_config.json');
      expect(args.slice(args.indexOf('--') + 1)).toEqual([desktop.command, ...desktop.args]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the HTTP configuration reaches the service’s /mcp with the key', async () => {
    const http: { url: string; headers: Record<string, string> } = configOf('cursor-mcp-http.json');
    expect(http).toEqual({
      url: `${PLACEHOLDER_URL}/mcp`,
      headers: { Authorization: `Bearer ${PLACEHOLDER_KEY}` },
    });
    const headers = Object.fromEntries(Object.entries(http.headers).map(([name, value]) => [name, filledIn(value)]));
    const client = new Client({ name: 'cursor-like', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(filledIn(http.url)), { requestInit: { headers } }));
    expect(await toolsOf(client)).toEqual(TOOLS);
  });
});
