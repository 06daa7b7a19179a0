// The client commands of `pausepoint` (serve and migrate are src/main.ts's).
import { askCommand } from './ask.js';
import { CLI_VERSION, err, GLOBAL_HELP, out } from './common.js';
import { listenCommand } from './listen.js';
import { pausesCommand } from './pauses.js';
import { webhooksCommand } from './webhooks.js';

export const HELP = `pausepoint ${CLI_VERSION}: pause a program until a human answers.

Usage: pausepoint COMMAND [flags]

The service:
  serve                      run the service (same as npm start)
  migrate                    apply database migrations and exit

Client (set PAUSEPOINT_API_KEY and PAUSEPOINT_BASE_URL, or pass --api-key, --base-url):
  ask QUESTION [flags]       ask, wait, print the outcome; exit 0 on the first option,
                             1 on any other, 2 on a timeout with no default, 3 on error;
                             --reviewer EMAIL (repeatable) names who decides
                             --form FILE asks for a form (JSON Schema) and prints its values as JSON
  pauses list|get|cancel|timeline
                             look at and cancel pauses; a pause's audit timeline
  webhooks list|add|rm       manage webhooks (and: webhooks deliveries ID)
  listen --forward-to URL    forward this key's events, signed, to a local URL
  mcp                        an MCP server on stdio, for AI agents to ask a human

Run pausepoint COMMAND --help for a command's flags.

${GLOBAL_HELP}`;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  ask: askCommand,
  pauses: pausesCommand,
  pause: pausesCommand,
  webhooks: webhooksCommand,
  webhook: webhooksCommand,
  listen: listenCommand,
  // Loaded when used: the MCP SDK is not needed by the other commands.
  mcp: async (args) => (await import('./mcp.js')).mcpCommand(args),
};

/** Runs a client command; resolves to the process's exit status. */
export async function runCli(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    out(HELP);
    return 0;
  }
  if (command === '--version' || command === 'version') {
    out(CLI_VERSION);
    return 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    err(`pausepoint: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  return run(rest);
}
