/**
 * Start steps that build the use cases from what is open: the metrics and routing over the backends,
 * the generation service, and the metered endpoints' services over the metering service.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { DependencyBreakers } from '../core/circuit-breaker.ts';
import type { DecodeOptions } from '../core/generation-format.ts';
import { AccessLog } from '../http/access-log.ts';
import { DeploymentMetrics, HttpMetrics } from '../http/metrics.ts';
import { UsageMetrics } from '../http/usage-metrics.ts';
import type { DeploymentStateStore } from '../limits/deployment-state.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { openAiEmbeddingsWire } from '../routes/embeddings.ts';
import { generationEndpoints, type StoredResponseStore } from '../routes/generation-endpoints.ts';
import { openAiImagesWire } from '../routes/images.ts';
import { openAiModerationsWire } from '../routes/moderations.ts';
import type { GenerationCache } from '../services/cache/generation-cache.ts';
import { CountTokensService } from '../services/count-tokens/count-tokens-service.ts';
import { EmbeddingsService } from '../services/embeddings/embeddings-service.ts';
import type { FileService } from '../services/files/file-service.ts';
import { GenerationService } from '../services/generation/generation-service.ts';
import { MeteredGenerations } from '../services/generation/metered-generations.ts';
import { deploymentTable } from '../services/generation/routing/deployment-table.ts';
import { Router } from '../services/generation/routing/router.ts';
import { ImagesService } from '../services/images/images-service.ts';
import type { MeteringService } from '../services/metering/metering-service.ts';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import { InputModeration } from '../services/generation/input-moderation.ts';
import { ModerationsService } from '../services/moderations/moderations-service.ts';

/**
 * The Prometheus registry (HTTP, dependencies, deployments, usage), the router over the deployments'
 * shared state, the access log, and the generation service. Ledger records feed the usage metrics and
 * the access log from now on (`ledgerObserver`).
 */
export function buildGeneration(
  config: Config,
  dependencies: {
    logger: Logger;
    breakers: DependencyBreakers;
    registry: ProviderRegistry;
    deploymentState: DeploymentStateStore;
    processMetrics: boolean;
    ledgerObserver: { observe: (record: LedgerRecord) => void };
  },
) {
  const metrics = new HttpMetrics(dependencies.processMetrics);
  metrics.observeDependencies(dependencies.breakers);
  const router = new Router({
    models: deploymentTable(config),
    state: dependencies.deploymentState,
    observer: new DeploymentMetrics(metrics.registry),
  });
  const usageMetrics = new UsageMetrics(metrics.registry);
  // A logger above `info` (LOG_LEVEL=warn) writes no access line: then no request pays for noting one.
  const accessLog = config.server.accessLog && dependencies.logger.isLevelEnabled('info') ? new AccessLog(dependencies.logger) : undefined;
  dependencies.ledgerObserver.observe = (record) => {
    usageMetrics.observe(record);
    accessLog?.usageRecorded(record);
  };
  const generation = new GenerationService({ config, registry: dependencies.registry, router, logger: dependencies.logger });
  return { metrics, usageMetrics, accessLog, generation };
}

/** The metered endpoints' use cases: generations (with the moderation pre-check), embeddings, moderations, images. */
export function buildMeteredServices(
  config: Config,
  dependencies: {
    generation: GenerationService;
    metering: MeteringService;
    registry: ProviderRegistry;
    files: FileService;
    storedResponses: StoredResponseStore;
    /** The response cache (runtime/build-response-cache.ts). */
    cache?: GenerationCache;
  },
) {
  const { generation, metering, registry, cache } = dependencies;
  const inputModeration = new InputModeration(config, registry);
  // How strictly request bodies are read: one frozen value, a dependency of every use case that decodes.
  const decodeOptions: DecodeOptions = Object.freeze({ validation: config.requestValidation });
  const generations = new MeteredGenerations({ generation, metering, inputModeration, cache, decodeOptions });
  const endpoints = generationEndpoints(dependencies.storedResponses);
  const countTokens = new CountTokensService({ generation, metering, decodeOptions });
  const oneShot = { config, models: generation, registry, metering };
  const embeddings = new EmbeddingsService({ ...oneShot, decodeOptions, wire: openAiEmbeddingsWire, cache });
  const moderations = new ModerationsService({ ...oneShot, wire: openAiModerationsWire });
  const images = new ImagesService({ ...oneShot, files: dependencies.files, wire: openAiImagesWire });
  return { generations, endpoints, countTokens, embeddings, moderations, images };
}
