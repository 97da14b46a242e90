/**
 * The operations listener (`server.operationsPort`, OPERATIONS_PORT): a second, small Fastify server for
 * `/metrics`, `/readyz` with its detail and `/healthz`, so they can be kept off the public listener (bound
 * to an internal address, `server.operationsHost`, or fire-walled). It has none of the edge: no API keys,
 * no limits, no access log, no request metrics; the operations token, when set, is checked by the routes
 * themselves (routes/operations.ts). Errors are the SPEC envelope, like the public listener's.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ServiceError } from '../core/service-error.ts';
import { newId } from '../core/ids.ts';
import { renderError, toServiceError } from './error-envelope.ts';
import { errorMetadata } from './metadata.ts';

export interface OperationsListenerOptions {
  /** `_metadata.creator` of error bodies. */
  operator: string;
  /** The process logger; undefined: logs off. */
  logger?: FastifyBaseLogger | undefined;
  /** Registers the operations routes (routes/operations.ts, listener `operations`). */
  routes: (app: FastifyInstance) => void;
}

export async function buildOperationsListener(options: OperationsListenerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    genReqId: () => newId.request(),
    // Through the log controller: the top-level option prints FSTDEP023 at every start (Fastify 5).
    logController: new LogController({ disableRequestLogging: true }),
    // Stays up while the public listener drains (its /readyz says `draining`); closed after it.
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.setErrorHandler(async (error, request, reply) => {
    const serviceError = toServiceError(error);
    if (serviceError.status >= 500) request.log.error({ err: serviceError.cause ?? error }, 'operations request failed');
    return reply
      .code(serviceError.status)
      .headers(serviceError.headers)
      .type('application/json; charset=utf-8')
      .send(renderError(serviceError, errorMetadata(options.operator, request.id)));
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const error = new ServiceError({
      status: 404,
      type: 'invalid_request_error',
      code: 'not_found',
      message: `${request.method} ${path} is not served here: the operations listener serves /healthz, /readyz and /metrics.`,
    });
    return reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send(renderError(error, errorMetadata(options.operator, request.id)));
  });
  options.routes(app);
  await app.ready();
  return app;
}
