import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Type from 'typebox';
import { formatSeconds } from '../../domain/units.js';
import { ApiError } from '../../errors.js';
import { chargeMoreRequests, keyHolderOf } from '../../http/auth.js';
import { commonHeaders } from '../../http/headers.js';
import { errorResponses } from '../../http/schemas.js';
import { createMcpServer, MAX_TOOL_WAIT_SECONDS } from '../../mcp/tools.js';
import { LocalQuestions } from './questions.js';

// MCP over Streamable HTTP at /mcp, stateless: each POST gets a server and a
// transport of its own, so any instance answers any call. It is reached with
// the API's Bearer keys (a login session is refused), scoped as the API is,
// under the same body caps, input checks and rate limit: the app's parsers
// and hooks run first, then the request is handed to the MCP SDK's transport.
//
// A JSON-RPC batch (which protocol revisions up to 2025-03-26 allow, and the
// SDK still negotiates) counts one request per message against the key's
// rate limit, so a batch of 100 ask_human calls costs what 100 POSTs would.
// Waits count against MAX_WAITS_PER_KEY with the API's long-polls.
//
// A tool call waits at most 55 s, and ends sooner when the client goes away
// (the transport closes and aborts the call) or the service shuts down (the
// wait answers with the pause as it stands, like a long-poll).

/** A JSON-RPC message or batch; the transport checks the rest. */
const JsonRpcBody = Type.Union([
  Type.Object({}, { additionalProperties: true }),
  Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: 100 }),
]);

/** POST /mcp in the API reference (/docs), with examples a test sends to the service. */
const McpSchema = {
  summary: 'Call the MCP tools',
  description:
    'The MCP tools (`ask_human`, `wait_for_human`, `cancel_question`, `list_pending_questions`) over MCP ' +
    'Streamable HTTP, stateless: POST one JSON-RPC message or a batch, with `Accept: application/json, ' +
    'text/event-stream` and an API key (test or live; a login session is refused). The answer is a ' +
    '`text/event-stream` carrying the JSON-RPC response (202 with no body for notifications alone). A tool ' +
    `call waits at most ${formatSeconds(MAX_TOOL_WAIT_SECONDS)}, then answers \`pending\` with the pause to wait on again. Each message of ` +
    "a batch counts against the key's rate limit, and the waits count against MAX_WAITS_PER_KEY like " +
    'long-polls. GET and DELETE are `405`: there are no sessions. The key, rate limit and body caps answer ' +
    "with the API's errors; past them, a request MCP cannot take (a missing `Accept`, a message that is not " +
    'JSON-RPC) is answered with a JSON-RPC error (`{jsonrpc, error: {code, message}, id: null}`).',
  tags: ['mcp'],
  body: {
    ...JsonRpcBody,
    'x-examples': {
      list: { summary: 'List the tools', value: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
      ask: {
        summary: 'Ask a person and wait up to 10 s',
        value: {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: {
            name: 'ask_human',
            arguments: { question: 'Deploy v2 to production?', expires_in: 3600, wait_seconds: 10 },
          },
        },
      },
    },
  },
  response: {
    200: {
      description: 'The JSON-RPC response(s), as Server-Sent Events (`event: message`, `data: {…}`).',
      content: { 'text/event-stream': { schema: Type.String() } },
    },
    202: { description: 'Accepted: the body held only notifications or responses.', type: 'null' },
    406: {
      description: 'The Accept header does not take both application/json and text/event-stream.',
      type: 'object',
    },
    ...errorResponses(400, 401, 413, 429),
  },
};

const notAllowed = () =>
  new ApiError(
    'method_not_allowed',
    'This MCP endpoint is stateless: POST each JSON-RPC message; there is no stream to GET and no session to DELETE.',
    undefined,
    { allow: 'POST' },
  );

export const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;

  app.post('/mcp', { schema: McpSchema }, async (request, reply) => {
    const holder = keyHolderOf(request);
    if (Array.isArray(request.body)) chargeMoreRequests(request, request.body.length - 1);
    const questions = new LocalQuestions(
      services,
      { developerId: holder.developerId, mode: holder.mode },
      holder.credentialHash,
    );
    const calls = services.metrics.mcpToolCalls;
    const server = createMcpServer(questions, {
      onUnexpectedError: (error) => request.log.error({ err: error }, 'MCP tool call failed'),
      onCall: (tool) => {
        calls.inc({ tool });
        return () => calls.dec({ tool });
      },
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const res = reply.raw;
    // The client went away, or the answer is complete: either way, any call
    // still running is aborted and its wait ends.
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    // While the service shuts down, the answer closes its connection, or a
    // kept-alive socket would hold the server's close open.
    res.on('finish', () => {
      if (services.waiters.isClosed) request.raw.socket.end();
    });
    reply.hijack();
    // What the app's onSend hook adds to every other answer.
    for (const [name, value] of Object.entries(commonHeaders(services, request.id))) res.setHeader(name, value);
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, res, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      } else {
        res.end();
      }
    }
  });

  app.get('/mcp', { schema: { hide: true } }, async () => {
    throw notAllowed();
  });
  app.delete('/mcp', { schema: { hide: true } }, async () => {
    throw notAllowed();
  });
};
