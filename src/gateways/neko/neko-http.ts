import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from '../../core/logger.js';
import { registerAgentRoutes } from './http-agent-routes.js';
import { sendDetail, type NekoApiContext } from './http-route-context.js';
import { registerTaskRoutes } from './http-task-routes.js';
import { isMusubiError } from '../../core/errors.js';
import { clientErrorHandler, type RequestGuard } from '../http/index.js';

/** Request bodies above this are refused (413). */
export const MAX_HTTP_BODY_BYTES = 1024 * 1024;

class InvalidJsonBody extends Error {}

/**
 * Builds the fastify app of the N.E.K.O. HTTP control API (spec neko.md 3.3): every body is read as
 * JSON whatever its content type (an empty body is no body), as the original does; a body that is not
 * JSON gets 422 `{"detail": "invalid JSON body"}`; unexpected failures are logged and answered 500
 * without a stack. With a `guard` (the gateway always gives one), a request from a foreign web page
 * is refused 403 `{"detail": ...}` before any route runs: a Host that is not this loopback server (DNS
 * rebinding), or a change with a foreign Origin or `Sec-Fetch-Site: cross-site` (a page POSTing
 * `text/plain` JSON needs no CORS preflight). Clients that are not browsers send neither header.
 */
export function buildNekoHttpApp(
  ctx: NekoApiContext,
  logger: Logger,
  options: { readonly guard?: RequestGuard } = {},
): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_HTTP_BODY_BYTES,
    clientErrorHandler: clientErrorHandler((message) => ({ detail: message })),
  });
  const { guard } = options;
  if (guard !== undefined) {
    app.addHook('onRequest', async (request, reply) => {
      try {
        guard.check({ method: request.method, url: request.url, headers: request.headers });
      } catch (err) {
        if (!isMusubiError(err)) throw err;
        return sendDetail(reply, 403, err.message);
      }
    });
  }
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new InvalidJsonBody('invalid JSON body'), undefined);
    }
  });
  app.setErrorHandler((err, _request, reply) => {
    if (err instanceof InvalidJsonBody) return sendDetail(reply, 422, 'invalid JSON body');
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendDetail(reply, 413, 'request body too large');
    logger.error({ err }, 'HTTP handler failed');
    return sendDetail(reply, 500, 'internal error');
  });
  app.setNotFoundHandler((_request, reply) => sendDetail(reply, 404, 'Not Found'));
  registerAgentRoutes(app, ctx);
  registerTaskRoutes(app, ctx);
  return app;
}
