// pausepoint mcp: the MCP server over stdio, for an MCP client (Claude
// Desktop, Claude Code, Cursor…) that starts it. stdout carries the protocol
// and nothing else: messages go to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { RemoteQuestions } from '../mcp/remote.js';
import { createMcpServer } from '../mcp/tools.js';
import {
  clientFrom,
  describeError,
  err,
  GLOBAL_HELP,
  out,
  parse,
  reportError,
  UsageError,
  withInterrupt,
} from './common.js';

export const MCP_HELP = `Usage: pausepoint mcp [--api-key KEY] [--base-url URL]

Runs an MCP server on stdin/stdout, for an MCP client to start. Its tools ask a
human through pausepoint and wait for the answer: ask_human, wait_for_human,
cancel_question, list_pending_questions. It ends when stdin closes.

For example, in Claude Code:
  claude mcp add --transport stdio --env PAUSEPOINT_API_KEY=svc_test_... pausepoint -- pausepoint mcp

Exit status: 0 when stdin closes, 1 when it cannot start, 2 bad usage.

${GLOBAL_HELP.replace(/\n\s*--json[^\n]*/, '')}`;

export async function mcpCommand(args: string[]): Promise<number> {
  try {
    const { values, positionals } = parse(args, {});
    if (values.help) {
      out(MCP_HELP);
      return 0;
    }
    if (values.json) throw new UsageError('mcp takes no --json: stdout carries the protocol');
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const questions = new RemoteQuestions(clientFrom(values));
    await withInterrupt(async (interrupted) => {
      const server = createMcpServer(questions, {
        onUnexpectedError: (error) => err(`pausepoint mcp: ${describeError(error)}`),
      });
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = resolve;
      });
      // The client closing stdin (or a signal) ends the server; calls in flight are aborted.
      const close = () => void server.close();
      process.stdin.once('end', close);
      interrupted.addEventListener('abort', close, { once: true });
      await server.connect(transport);
      await closed;
    });
    return 0;
  } catch (error) {
    // Never on stdout, even with --json: stdout is the protocol's.
    reportError(error, false, MCP_HELP);
    return error instanceof UsageError ? 2 : 1;
  }
}
