/**
 * Factory of the `anthropic` provider kind: one keep-alive undici pool per configured provider, shared
 * by its models. Sends `x-api-key` (re-read when it comes from a file) and `anthropic-version` from the
 * provider config.
 */
import type { ResolvedProviderConfig } from '../../config/index.ts';
import type { LanguageModel, LanguageModelSettings, ProviderInstance } from '../../core/language-model.ts';
import { followApiKeyFile } from '../shared/api-key-source.ts';
import { UpstreamHttpClient } from '../shared/http-client.ts';
import type { ProviderContext } from '../shared/provider-context.ts';
import { AnthropicMessagesLanguageModel } from './anthropic-messages-language-model.ts';

export type AnthropicProviderConfig = Extract<ResolvedProviderConfig, { kind: 'anthropic' }>;

/** `max_tokens` when neither the request nor the model config gives one, tokens. */
const FALLBACK_MAX_OUTPUT_TOKENS = 4096;

export function createAnthropicProvider(config: AnthropicProviderConfig, context: ProviderContext): ProviderInstance {
  const client = new UpstreamHttpClient({ baseUrl: config.baseUrl, timeoutMs: config.timeoutMs, apiKey: config.apiKeyValue });
  const headers: Record<string, string> = { 'anthropic-version': config.anthropicVersion, ...config.headers };
  if (config.apiKeyValue !== undefined) headers['x-api-key'] = config.apiKeyValue;
  // A key read from a file follows the file: the shared headers object is updated in place.
  const keyFile = followApiKeyFile(config, client, context.logger, (key) => (headers['x-api-key'] = key));
  const languageModels = new Map<string, LanguageModel>();
  return {
    languageModel(upstreamModel: string, settings?: LanguageModelSettings): LanguageModel {
      const defaultMaxOutputTokens = settings?.defaultMaxOutputTokens ?? FALLBACK_MAX_OUTPUT_TOKENS;
      const key = `${upstreamModel}\u0000${defaultMaxOutputTokens}`;
      let model = languageModels.get(key);
      if (model === undefined) {
        model = new AnthropicMessagesLanguageModel(client, {
          upstreamModel,
          defaultMaxOutputTokens,
          headers,
          ...(context.logger === undefined ? {} : { logger: context.logger }),
        });
        languageModels.set(key, model);
      }
      return model;
    },
    close: async () => {
      keyFile?.close();
      await client.close();
    },
  };
}
