import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Type from 'typebox';
import { ApiError } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { commonHeaders } from '../../http/headers.js';
import { createMcpServer } from '../../mcp/tools.js';
import { LocalQuestions } from './questions.js';

// MCP over Streamable HTTP at /mcp, stateless: each POST gets a server and a
// transport of its own, so any instance answers any call. It is reached with
// the API's Bearer keys (a login session is refused), scoped as the API is,
// under the same body caps, input checks and rate limit: the app's parsers
// and hooks run first, then the request is handed to the MCP SDK's transport.
//
// A tool call waits at most 55 s, and ends sooner when the client goes away
// (the transport closes and aborts the call) or the service shuts down (the
// wait answers with the pause as it stands, like a long-poll).

/** A JSON-RPC message or batch; the transport checks the rest. */
const JsonRpcBody = Type.Union([
  Type.Object({}, { additionalProperties: true }),
  Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: 100 }),
]);

const notAllowed = () =>
  new ApiError(
    'method_not_allowed',
    'This MCP endpoint is stateless: POST each JSON-RPC message; there is no stream to GET and no session to DELETE.',
    undefined,
    { allow: 'POST' },
  );

export const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;

  app.post('/mcp', { schema: { hide: true, body: JsonRpcBody } }, async (request, reply) => {
    const holder = keyHolderOf(request);
    const questions = new LocalQuestions(services, { developerId: holder.developerId, mode: holder.mode });
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
      if (services.signals.isClosed) request.raw.socket.end();
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
