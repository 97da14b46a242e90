/**
 * The shared gateway bench's Switchyard configuration (its `configs/switchyard-bench.yaml`), as an object:
 * one tier with finite (unreachable) limits on every window, an OpenAI-compatible provider with an
 * upstream key and retries on, one model. Used by `shared-shape.ts` and `tracing.ts`.
 */
export function sharedBenchConfig(upstreamOrigin: string) {
  return {
    operator: 'bench',
    defaultTier: 'Bench',
    tiers: {
      Bench: {
        requestsPerMinute: 100_000_000,
        tokensPerMinute: 1_000_000_000,
        tokensPerDay: 100_000_000_000,
        tokensPerMonth: 1_000_000_000_000,
        concurrentBatches: 5,
        permissions: ['chat.completions', 'messages', 'responses', 'embeddings', 'moderations', 'images', 'files', 'batches', 'models'],
      },
    },
    providers: { mock: { kind: 'openai-compatible', baseUrl: `${upstreamOrigin}/v1`, apiKey: 'sk-mock' } },
    models: [
      {
        id: 'bench-model',
        provider: 'mock',
        capabilities: ['chat', 'streaming', 'function_calling', 'json_mode'],
        pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 },
      },
    ],
  };
}
