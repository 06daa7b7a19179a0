import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import {
  AnswerFormInput,
  findResponder,
  questionFor,
  type Responder,
  submitPostedAnswer,
} from '../actions/answer-pause.js';
import { MAX_POSTED_FORM_BYTES, postedFields } from '../domain/form-fields.js';
import { ApiError } from '../errors.js';
import { pageSecurityHeaders } from '../http/headers.js';
import { PAGE_CSS, PAGE_JS } from './assets.js';
import { refusedFields } from './form-inputs.js';
import {
  type PageState,
  pageMessage,
  renderErrorPage,
  renderNotFoundPage,
  renderQuestionPage,
} from './response-page.js';

// The human's page at /r/{token}. A GET only shows (mail scanners and link
// previews open links); answering takes a POST from the form. After a POST
// the browser is redirected, so a reload never submits twice.

// The address holds the token: no link on the page may pass it on.
const SECURITY_HEADERS = pageSecurityHeaders({ referrer: 'no-referrer' });

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers(SECURITY_HEADERS).header('cache-control', 'no-store').type('text/html; charset=utf-8');
}

// Any token is looked at; one that is not genuine gets the not-found page.
const TokenParams = Type.Object({ token: Type.String() });

export const responsePage: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(formbody, { bodyLimit: MAX_POSTED_FORM_BYTES });

  app.get('/assets/page.css', { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(PAGE_CSS),
  );
  app.get('/assets/page.js', { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(PAGE_JS),
  );

  // Browsers ask for it on every page; answering keeps their consoles clean.
  app.get('/favicon.ico', { schema: { hide: true } }, (_req, reply) => reply.code(204).send());

  /** The 4xx status of an error the client caused (unreadable body or query, refused input), else null. */
  const clientErrorStatus = (error: unknown): number | null => {
    const status = error instanceof ApiError ? error.status : ((error as FastifyError).statusCode ?? 500);
    return (error as FastifyError).validation ? 400 : status >= 400 && status < 500 ? status : null;
  };
  const limitByAddress = async (request: FastifyRequest) => app.rateLimits.respond.hit(`respond:${request.ip}`);
  const isRateLimited = (error: unknown): error is ApiError =>
    error instanceof ApiError && error.code === 'rate_limited';
  const tooManyRequests = (reply: FastifyReply, error: ApiError) =>
    pageHeaders(reply)
      .headers(error.headers ?? {})
      .code(429)
      .send(renderErrorPage('Too many requests', 'Please wait a minute, then reload this page.'));

  const notFound = (reply: FastifyReply) => pageHeaders(reply).code(404).send(renderNotFoundPage());
  /** A failure on our side: logged with its cause, and a page that says to try again, never "not valid". */
  const failed = (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    request.log.error({ err: error }, 'response page failed');
    return pageHeaders(reply).code(500).send(renderErrorPage());
  };

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    extra: Partial<PageState>,
    status = 200,
  ) {
    let responder: Responder | undefined;
    let question: Awaited<ReturnType<typeof questionFor>>;
    try {
      responder = await findResponder(app.services, token);
      if (!responder) return notFound(reply);
      question = await questionFor(app.services, responder);
    } catch (error) {
      return failed(request, reply, error);
    }
    const html = renderQuestionPage({
      question,
      action: `/r/${encodeURIComponent(token)}`,
      now: app.services.clock.now(),
      ...extra,
    });
    return pageHeaders(reply).code(status).send(html);
  }

  app.get(
    '/r/:token',
    {
      schema: {
        hide: true,
        params: TokenParams,
        // Lenient: a link mangled by a mail client still shows the page.
        querystring: Type.Object({ choice: Type.Optional(Type.String()), answered: Type.Optional(Type.String()) }),
      },
      onRequest: limitByAddress,
      errorHandler: (error, request, reply) => {
        if (isRateLimited(error)) return tooManyRequests(reply, error);
        // A query string we cannot read (e.g. ?choice given twice) is ignored.
        if (clientErrorStatus(error)) return render(request, reply, (request.params as { token: string }).token, {});
        return failed(request, reply, error);
      },
    },
    (request, reply) =>
      render(request, reply, request.params.token, {
        preselected: request.query.choice,
        justAnswered: request.query.answered === '1',
      }),
  );

  app.post(
    '/r/:token',
    {
      schema: {
        hide: true,
        params: TokenParams,
        body: AnswerFormInput,
      },
      onRequest: limitByAddress,
      // Errors come back as the page with a message, never as JSON.
      errorHandler: (error, request, reply) => {
        if (isRateLimited(error)) return tooManyRequests(reply, error);
        const token = (request.params as { token: string }).token;
        const status = clientErrorStatus(error);
        if (status)
          return render(request, reply, token, { error: 'That answer could not be read; try again.' }, status);
        request.log.error({ err: error }, 'response page failed');
        return render(request, reply, token, { error: 'Something went wrong on our side; please try again.' }, 500);
      },
    },
    async (request, reply) => {
      const { token } = request.params;
      const { choice, text } = request.body;
      const fields = postedFields(request.body as Record<string, unknown>);
      try {
        await submitPostedAnswer(app.services, token, { choice, text, fields });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'not_found') return notFound(reply);
        const problems = refusedFields(error);
        // Refused field by field: the page again, each problem beside its field, with what was typed.
        if (problems) return render(request, reply, token, { refused: { text, fields, problems } }, 400);
        return render(request, reply, token, { error: pageMessage(error) }, error.status);
      }
      return reply
        .code(303)
        .header('location', `/r/${encodeURIComponent(token)}?answered=1`)
        .send();
    },
  );
};
