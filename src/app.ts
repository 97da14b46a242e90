/**
 * buildApp(dependencies): a Fastify instance with the edge and every route wired. No I/O happens at
 * import time; the composition root (runtime.ts) builds the dependencies.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from './accounts/authenticator.ts';
import type { BatchService } from './batches/batch-service.ts';
import type { Config } from './config/index.ts';
import { newId } from './core/ids.ts';
import type { Database } from './db/database.ts';
import { installEdge } from './http/edge.ts';
import type { InternalCalls } from './http/internal-calls.ts';
import { HttpMetrics } from './http/metrics.ts';
import './http/request-context.ts';
import { registerAuthKeyRoutes } from './routes/auth-key.ts';
import { registerBatchRoutes } from './routes/batches.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerChatCompletionRoutes } from './routes/chat-completions.ts';
import { registerEmbeddingRoutes } from './routes/embeddings.ts';
import { registerImageRoutes } from './routes/images.ts';
import { registerModerationRoutes } from './routes/moderations.ts';
import { registerMessagesRoutes } from './routes/messages.ts';
import { registerModelRoutes } from './routes/models.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerOperationsRoutes } from './routes/operations.ts';
import { registerResponsesRoutes, type StoredResponseStore } from './routes/responses.ts';
import type { ProviderRegistry } from './providers/registry.ts';
import type { GenerationService } from './services/generation/generation-service.ts';
import type { FileService } from './services/files/file-service.ts';
import type { MeteringService } from './services/metering/metering-service.ts';
import type { InputModeration } from './services/moderation/input-moderation.ts';

export interface AppDependencies {
  config: Config;
  database: Database;
  authenticator: Authenticator;
  /** Rate limits, quotas, usage figures and the usage ledger. */
  metering: MeteringService;
  /** Recognises in-process calls on a key's behalf (batch execution). */
  internalCalls: InternalCalls;
  /** Stored files: uploads, batch results, generated images and signed links to them. */
  files: FileService;
  /** The batch API (the work itself is done by the BatchWorker runtime.ts starts). */
  batches: BatchService;
  /** Model resolution, retries, fallbacks and the canonical stream for the text endpoints. */
  generation: GenerationService;
  /** Every configured backend (embedding, moderation and image models are taken from it directly). */
  registry: ProviderRegistry;
  /** The optional moderation pre-check of generation inputs. */
  inputModeration: InputModeration;
  /** Stored conversations of the responses endpoint (`store: true`, `previous_response_id`). */
  storedResponses: StoredResponseStore;
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
    // On close, idle keep-alive connections are closed at once (not after their keep-alive timeout).
    forceCloseConnections: 'idle',
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
    decodeOptions: Object.freeze({ validation: config.requestValidation }),
  });
  registerOpenApiRoute(app, config.operator);
  registerOperationsRoutes(app, () => dependencies.database.ping(), metrics);
  registerModelRoutes(app, config);
  registerAuthKeyRoutes(app, dependencies.metering);
  registerFileRoutes(app, dependencies.files, { uploadLimitBytes: config.server.uploadLimitBytes });
  registerBatchRoutes(app, dependencies.batches);
  registerChatCompletionRoutes(app, dependencies);
  registerMessagesRoutes(app, dependencies);
  registerResponsesRoutes(app, dependencies);
  const modelRouteDependencies = { config, models: dependencies.generation, registry: dependencies.registry };
  registerEmbeddingRoutes(app, modelRouteDependencies);
  registerModerationRoutes(app, modelRouteDependencies);
  registerImageRoutes(app, { ...modelRouteDependencies, files: dependencies.files });
  await app.ready();
  return app;
}
