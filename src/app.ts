/**
 * buildApp(dependencies): a Fastify instance with the edge and every route wired. No I/O happens at
 * import time; the composition root (runtime.ts) builds the dependencies.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from './accounts/authenticator.ts';
import type { Config } from './config/index.ts';
import { newId } from './core/ids.ts';
import type { Database } from './db/database.ts';
import { installEdge } from './http/edge.ts';
import type { InternalCalls } from './http/internal-calls.ts';
import { HttpMetrics } from './http/metrics.ts';
import './http/request-context.ts';
import { registerAuthKeyRoutes } from './routes/auth-key.ts';
import { registerModelRoutes } from './routes/models.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerOperationsRoutes } from './routes/operations.ts';
import type { MeteringService } from './services/metering/metering-service.ts';

export interface AppDependencies {
  config: Config;
  database: Database;
  authenticator: Authenticator;
  /** Rate limits, quotas, usage figures and the usage ledger. */
  metering: MeteringService;
  /** Recognises in-process calls on a key's behalf (batch execution). */
  internalCalls: InternalCalls;
}

export interface BuildAppOptions {
  /** The process logger (pino); without one, logs are off (tests). */
  logger?: Logger;
  /** Collect process metrics (CPU, memory, event loop) into /metrics. */
  processMetrics?: boolean;
}

export async function buildApp(dependencies: AppDependencies, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = dependencies;
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger as FastifyBaseLogger }),
    bodyLimit: config.server.bodyLimitBytes,
    genReqId: () => newId.request(),
    logController: new LogController({
      requestIdLogLabel: 'request_id',
      // One line per request only when debugging: at 10k+ requests/s they would dominate the cost.
      disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace',
    }),
    return503OnClosing: true,
    forceCloseConnections: false,
    routerOptions: { ignoreTrailingSlash: true },
  });
  const metrics = new HttpMetrics(options.processMetrics ?? false);
  installEdge(app, {
    operator: config.operator,
    usage: dependencies.metering,
    metering: dependencies.metering,
    authenticator: dependencies.authenticator,
    internalCalls: dependencies.internalCalls,
    metrics,
    keepAliveSeconds: config.server.keepAliveSeconds,
  });
  registerOpenApiRoute(app, config.operator);
  registerOperationsRoutes(app, () => dependencies.database.ping(), metrics);
  registerModelRoutes(app, config);
  registerAuthKeyRoutes(app, dependencies.metering);
  await app.ready();
  return app;
}
