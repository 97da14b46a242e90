/**
 * buildApp(dependencies): a Fastify instance with the edge and every route wired. No I/O happens at
 * import time; the composition root (runtime.ts) builds the dependencies.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from './accounts/authenticator.ts';
import type { BatchService } from './batches/batch-service.ts';
import type { Config } from './config/index.ts';
import { newId } from './core/ids.ts';
import type { Database } from './db/database.ts';
import type { DashboardApiDependencies } from './dashboard/register-dashboard.ts';
import { registerDashboard } from './dashboard/register-dashboard.ts';
import type { AccessLog } from './http/access-log.ts';
import { lazyRequestLoggerFactory } from './http/lazy-request-logger.ts';
import { installEdge } from './http/edge.ts';
import { HttpMetrics } from './http/metrics.ts';
import { installConnectionCaps } from './http/connection-caps.ts';
import { installSlowReaderGuard } from './http/slow-readers.ts';
import { clientErrorHandler, installSlowClientGuards } from './http/slow-clients.ts';
import { fastifyTrustProxy, installPublicOrigin } from './http/public-origin.ts';
import './http/request-context.ts';
import { registerAuthKeyRoutes } from './routes/auth-key.ts';
import { registerBatchRoutes } from './routes/batches.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerEmbeddingRoutes } from './routes/embeddings.ts';
import { registerImageRoutes } from './routes/images.ts';
import { registerModerationRoutes } from './routes/moderations.ts';
import { registerCountTokensRoute } from './routes/count-tokens.ts';
import { registerModelRoutes } from './routes/models.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerRootRoute } from './routes/root.ts';
import { registerOperationsRoutes, type ReadinessReport } from './routes/operations.ts';
import type { StoredResponseStore } from './routes/generation-endpoints.ts';
import { registerGenerationRoute } from './routes/generation-routes.ts';
import { registerResponsesRoutes } from './routes/responses.ts';
import type { CountTokensService } from './services/count-tokens/count-tokens-service.ts';
import type { MeteredGenerations } from './services/generation/metered-generations.ts';
import type { GenerationEndpoint } from './services/generation/run-generation-endpoint.ts';
import type { EmbeddingsService } from './services/embeddings/embeddings-service.ts';
import type { FileService } from './services/files/file-service.ts';
import type { ImagesService } from './services/images/images-service.ts';
import type { ModerationsService } from './services/moderations/moderations-service.ts';
import type { MeteringService } from './services/metering/metering-service.ts';
import { answerAdmittedRequest } from './services/metering/admitted-request.ts';
import type { JsonAnswer } from './services/answer.ts';
import { callerOf } from './routes/caller-of.ts';
import type { Tracing } from './telemetry/trace-types.ts';

export interface AppDependencies {
  config: Config;
  database: Database;
  authenticator: Authenticator;
  /** Rate limits, quotas, usage figures and the usage ledger. */
  metering: MeteringService;
  /** Stored files: uploads, batch results, generated images and signed links to them. */
  files: FileService;
  /** The batch API (the work itself is done by the BatchWorker runtime.ts starts). */
  batches: BatchService;
  /** The embeddings use case (services/embeddings/), also serving batch lines. */
  embeddings: Pick<EmbeddingsService, 'run'>;
  /** The moderations use case (services/moderations/). */
  moderations: Pick<ModerationsService, 'run'>;
  /** The image-generation use case (services/images/). */
  images: Pick<ImagesService, 'run'>;
  /** The metered generation use case (moderation pre-check, limits, generation, ledger). */
  generations: MeteredGenerations;
  /** The text-generation endpoints (routes/generation-endpoints.ts), one route each. */
  generationEndpoints: readonly GenerationEndpoint[];
  /** The token-count use case of `/v1/messages/count_tokens`. */
  countTokens: Pick<CountTokensService, 'run' | 'decodeOptions'>;
  /** Stored conversations of the responses endpoint (`store: true`, `previous_response_id`). */
  storedResponses: StoredResponseStore;
  /** The owners' dashboard under /dashboard (absent: not mounted). */
  dashboard?: Omit<DashboardApiDependencies, 'config' | 'usage' | 'batches' | 'files'>;
  /** What `/readyz` reports (runtime.ts: database, Redis, blob store, draining); default: a database ping. */
  readiness?: () => Promise<ReadinessReport>;
  /** The Prometheus registry served at /metrics, when the composition root shares it (routing metrics); default: a new one. */
  metrics?: HttpMetrics;
  /** One line per request (http/access-log.ts), fed by the usage ledger's observer; absent: no access log. */
  accessLog?: AccessLog;
  /** Traces (telemetry/start-tracing.ts); undefined: tracing off. */
  tracing?: Tracing | undefined;
}

export interface BuildAppOptions {
  /** The process logger (pino); without one, logs are off (tests). */
  logger?: Logger;
  /** Collect process metrics (CPU, memory, event loop) into /metrics. */
  processMetrics?: boolean;
  /**
   * Adds routes after Switchyard's own, before the app is ready. They sit behind the same edge: request
   * ids, the key and permission in their `config.switchyard`, `_metadata` through `reply.sendData`, the
   * error envelope; those under `/v1/` are listed in `/v1/openapi.json`. A route limited like
   * Switchyard's own answers `reply.sendAnswer(await tools.answerRequest(request, work))`. For
   * embedding, and for benchmarks that measure the edge alone.
   */
  extraRoutes?: (app: FastifyInstance, tools: ExtraRouteTools) => void;
}

/** What an embedder's routes (`extraRoutes`) use to answer the way Switchyard's routes do. */
export interface ExtraRouteTools {
  /**
   * Admits one request of the caller against its key's request limits (the SPEC 429 otherwise, with
   * the rate-limit headers), then answers the body `work` builds, for `reply.sendAnswer`.
   */
  answerRequest(request: FastifyRequest, work: () => Promise<Record<string, unknown>>): Promise<JsonAnswer>;
}

/** A Fastify schema compiler factory whose compiler throws: Switchyard's routes carry no schemas to compile. */
function refuseRouteSchemas(): () => never {
  return () => {
    throw new Error('Fastify route schemas are not compiled here: validate in the format decoder (src/formats/) instead.');
  };
}

export async function buildApp(dependencies: AppDependencies, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = dependencies;
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger as FastifyBaseLogger }),
    bodyLimit: config.server.bodyLimitBytes,
    genReqId: () => newId.request(),
    childLoggerFactory: lazyRequestLoggerFactory,
    logController: new LogController({
      requestIdLogLabel: 'request_id',
      // One line per request only when debugging: at 10k+ requests/s they would dominate the cost.
      disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace',
    }),
    return503OnClosing: true,
    // Slow clients are cut (http/slow-clients.ts): headers within headersTimeoutMs, the whole request
    // within requestTimeoutMs; Node checks both every connectionsCheckingInterval.
    requestTimeout: Math.max(config.server.requestTimeoutMs, config.server.headersTimeoutMs + 1),
    http: {
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: Math.max(config.server.requestTimeoutMs, config.server.headersTimeoutMs + 1),
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.server.headersTimeoutMs / 4))),
    },
    clientErrorHandler: clientErrorHandler(config.operator),
    // On close, idle keep-alive connections are closed at once (not after their keep-alive timeout).
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    // Requests are validated by the formats' decoders, with the SPEC's `param`s, and answers are plain
    // JSON.stringify: no route compiles a Fastify schema. Fastify's default compilers would load Ajv and
    // fast-json-stringify at every start (~80 of ~1,560 ms here); these refuse loudly should a route bring one.
    schemaController: { compilersFactory: { buildValidator: refuseRouteSchemas, buildSerializer: refuseRouteSchemas } },
    // X-Forwarded-For/-Proto/-Host are believed only from the proxies named here (TRUST_PROXY).
    trustProxy: fastifyTrustProxy(config.server.trustProxy),
  });
  installPublicOrigin(app, config.server);
  // Before the edge: the body rate applies from a request's first byte, authenticated or not.
  installSlowClientGuards(app, {
    operator: config.operator,
    usage: dependencies.metering,
    bodyIdleTimeoutMs: config.server.bodyIdleTimeoutMs,
    bodyTimeoutMs: config.server.bodyTimeoutMs,
    bodyMinBytesPerSecond: config.server.bodyMinBytesPerSecond,
  });
  installSlowReaderGuard(app, config.server);
  installConnectionCaps(app.server, config.server, app.log);
  const metrics = dependencies.metrics ?? new HttpMetrics(options.processMetrics ?? false);
  installEdge(app, {
    operator: config.operator,
    usage: dependencies.metering,
    authenticator: dependencies.authenticator,
    metrics,
    keepAliveSeconds: config.server.keepAliveSeconds,
    streamStallTimeoutMs: config.server.streamStallTimeoutMs,
    tracing: dependencies.tracing,
  });
  dependencies.accessLog?.install(app);
  registerOpenApiRoute(app, config.operator);
  registerRootRoute(app, { dashboard: dependencies.dashboard !== undefined });
  const readiness =
    dependencies.readiness ??
    (async (): Promise<ReadinessReport> => ({
      draining: false,
      checks: { database: (await dependencies.database.ping()) ? { ok: true } : { ok: false, error: 'the database did not answer' } },
    }));
  registerOperationsRoutes(app, readiness, metrics, {
    operationsToken: config.server.operationsToken,
    logger: app.log,
    // With an operations listener (runtime.ts), the public one keeps only what a balancer needs.
    listener: config.server.operationsPort === undefined ? 'all' : 'public',
  });
  registerModelRoutes(app, config, dependencies.metering);
  registerAuthKeyRoutes(app, dependencies.metering);
  registerFileRoutes(app, dependencies.files, dependencies.metering, { uploadLimitBytes: config.server.uploadLimitBytes });
  registerBatchRoutes(app, dependencies.batches, dependencies.metering);
  for (const endpoint of dependencies.generationEndpoints) registerGenerationRoute(app, endpoint, dependencies.generations);
  registerCountTokensRoute(app, dependencies.countTokens);
  registerResponsesRoutes(app, dependencies.storedResponses, dependencies.metering);
  registerEmbeddingRoutes(app, dependencies.embeddings);
  registerModerationRoutes(app, dependencies.moderations);
  registerImageRoutes(app, dependencies.images);
  if (dependencies.dashboard !== undefined) {
    await registerDashboard(app, {
      ...dependencies.dashboard,
      config,
      usage: dependencies.metering,
      batches: dependencies.batches,
      files: dependencies.files,
    });
  }
  options.extraRoutes?.(app, {
    answerRequest: (request, work) => answerAdmittedRequest(dependencies.metering, callerOf(request), work),
  });
  await app.ready();
  return app;
}
