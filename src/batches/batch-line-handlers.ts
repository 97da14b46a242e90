/**
 * The batch endpoints' handlers (SPEC: chat completions, embeddings, responses) for the line executor
 * (service-line-executor.ts): the same use cases the HTTP routes serve, a line's body in, the
 * endpoint's response body out.
 */
import type { EmbeddingsService } from '../services/embeddings/embeddings-service.ts';
import type { MeteredGenerations } from '../services/generation/metered-generations.ts';
import { runGenerationEndpoint, type GenerationEndpoint } from '../services/generation/run-generation-endpoint.ts';
import { BATCH_ENDPOINTS } from './batch-service.ts';
import type { BatchLineHandler } from './service-line-executor.ts';

export interface BatchLineHandlerDependencies {
  /** The text-generation endpoints (the composition root's table); those in BATCH_ENDPOINTS get a handler. */
  endpoints: readonly GenerationEndpoint[];
  generations: MeteredGenerations;
  embeddings: Pick<EmbeddingsService, 'run'>;
}

export function batchLineHandlers(dependencies: BatchLineHandlerDependencies): Map<string, BatchLineHandler> {
  const handlers = new Map<string, BatchLineHandler>();
  for (const endpoint of dependencies.endpoints) {
    if (!(BATCH_ENDPOINTS as readonly string[]).includes(endpoint.path)) continue;
    handlers.set(endpoint.path, async (caller, body) => {
      const answer = await runGenerationEndpoint(endpoint, caller, body, dependencies.generations, { allowStream: false });
      // allowStream: false means the answer is one body; a stream here would be a bug of the runner.
      if (answer.stream) throw new Error('a batch line was answered as a stream');
      return answer.body;
    });
  }
  const { embeddings } = dependencies;
  handlers.set('/v1/embeddings', async (caller, body) => (await embeddings.run(caller, body)).body);
  return handlers;
}
