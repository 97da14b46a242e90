/**
 * The batch endpoints' handlers (SPEC: chat completions, embeddings, responses), built from the same
 * values the HTTP routes serve, for the batch worker's line executor.
 */
import { BATCH_ENDPOINTS } from '../batches/batch-service.ts';
import type { BatchLineHandler } from '../batches/service-line-executor.ts';
import type { DecodeOptions } from '../core/generation-format.ts';
import type { MeteredGenerations } from '../services/generation/metered-generations.ts';
import { runGenerationEndpoint, type GenerationEndpoint } from '../services/generation/run-generation-endpoint.ts';
import { createEmbeddingsHandler, type EmbeddingRouteDependencies } from './embeddings.ts';

export interface BatchLineHandlerDependencies extends EmbeddingRouteDependencies {
  endpoints: readonly GenerationEndpoint[];
  generations: MeteredGenerations;
  decodeOptions: DecodeOptions;
}

export function batchLineHandlers(dependencies: BatchLineHandlerDependencies): Map<string, BatchLineHandler> {
  const handlers = new Map<string, BatchLineHandler>();
  for (const endpoint of dependencies.endpoints) {
    if (!(BATCH_ENDPOINTS as readonly string[]).includes(endpoint.path)) continue;
    handlers.set(endpoint.path, async (caller, body) => {
      const answer = await runGenerationEndpoint(endpoint, caller, body, dependencies.generations, dependencies.decodeOptions, {
        allowStream: false,
      });
      // allowStream: false means the answer is one body; a stream here would be a bug of the runner.
      if (answer.stream) throw new Error('a batch line was answered as a stream');
      return answer.body;
    });
  }
  const embed = createEmbeddingsHandler(dependencies);
  handlers.set('/v1/embeddings', async (caller, body) => (await embed(caller, body)).body);
  return handlers;
}
