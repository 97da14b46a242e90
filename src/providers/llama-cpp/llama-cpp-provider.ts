/**
 * Factory of the `llama-cpp` provider kind: local GGUF files run in-process with node-llama-cpp. A
 * model's `upstreamModel` is the path of its GGUF file. Nothing native happens at construction: the
 * llama.cpp binary and each model are loaded on the first request that needs them.
 *
 * Concurrency: each model runs at most `sequencesPerModel` generations at once (default 4), evaluated
 * together in shared batches; further requests wait in arrival order. Threads: the config's `threads`,
 * else the machine's core count (node-llama-cpp's own default oversubscribes small machines).
 */
import { availableParallelism } from 'node:os';
import type { ResolvedProviderConfig } from '../../config/index.ts';
import type { LanguageModel, LanguageModelSettings, ProviderInstance } from '../../core/language-model.ts';
import type { ProviderContext } from '../shared/provider-context.ts';
import { LlamaCppLanguageModel } from './llama-cpp-language-model.ts';
import { LlamaCppRuntime } from './llama-cpp-runtime.ts';

export type LlamaCppProviderConfig = Extract<ResolvedProviderConfig, { kind: 'llama-cpp' }>;

/** Generations one model runs at once by default. */
export const DEFAULT_SEQUENCES_PER_MODEL = 4;
/** Largest context of one sequence by default, tokens (smaller when the model was trained shorter or memory is short). */
export const DEFAULT_MAX_CONTEXT_TOKENS = 8192;

/** Overrides of the configured tuning (tests keep the native side small with them). */
export interface LlamaCppProviderOptions {
  /** Generations one model runs at once; more wait in a queue. */
  sequencesPerModel?: number;
  /** Upper bound of one sequence's context (prompt + completion), tokens. */
  maxContextTokens?: number;
}

/** CPU threads llama.cpp uses: the configured count, else every core of the machine. */
export function resolveLlamaCppThreads(config: Pick<LlamaCppProviderConfig, 'threads'>): number {
  return config.threads ?? availableParallelism();
}

export function createLlamaCppProvider(
  config: LlamaCppProviderConfig,
  context: ProviderContext,
  options: LlamaCppProviderOptions = {},
): ProviderInstance {
  const runtime = new LlamaCppRuntime({
    threads: resolveLlamaCppThreads(config),
    sequencesPerModel: options.sequencesPerModel ?? config.sequencesPerModel ?? DEFAULT_SEQUENCES_PER_MODEL,
    maxContextTokens: options.maxContextTokens ?? config.maxContextTokens ?? DEFAULT_MAX_CONTEXT_TOKENS,
    ...(context.logger === undefined ? {} : { logger: context.logger }),
  });
  const languageModels = new Map<string, LanguageModel>();
  return {
    languageModel(upstreamModel: string, settings?: LanguageModelSettings): LanguageModel {
      const key = `${upstreamModel}\u0000${settings?.defaultMaxOutputTokens ?? ''}`;
      let model = languageModels.get(key);
      if (model === undefined) {
        // Models of one file share the runtime's single loaded copy; only the settings differ.
        model = new LlamaCppLanguageModel(runtime, upstreamModel, settings ?? {}, context.logger);
        languageModels.set(key, model);
      }
      return model;
    },
    close: () => runtime.close(),
  };
}
