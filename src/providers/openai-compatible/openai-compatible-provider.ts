/**
 * Factory of the `openai-compatible` provider kind: one keep-alive undici pool per configured provider,
 * shared by every model of that provider. `providers/registry.ts` calls it once per provider entry.
 */
import type { ResolvedProviderConfig } from '../../config/index.ts';
import type { LanguageModel, ProviderInstance } from '../../core/language-model.ts';
import { followApiKeyFile, type ApiKeyFile } from '../shared/api-key-source.ts';
import { UpstreamHttpClient } from '../shared/http-client.ts';
import type { ProviderContext } from '../shared/provider-context.ts';
import { OpenAICompatibleChatLanguageModel } from './openai-compatible-chat-language-model.ts';
import { OpenAICompatibleEmbeddingModel } from './openai-compatible-embedding-model.ts';
import { OpenAICompatibleImageModel } from './openai-compatible-image-model.ts';
import { OpenAICompatibleModerationModel } from './openai-compatible-moderation-model.ts';

export type OpenAICompatibleProviderConfig = Extract<ResolvedProviderConfig, { kind: 'openai-compatible' }>;

/** What every model class of this folder needs to talk to the upstream. */
export interface OpenAICompatibleConnection {
  client: UpstreamHttpClient;
  /** Authorization (when an apiKey is configured) plus the provider's configured headers. */
  headers: Record<string, string>;
  /** Follows the key file when the key came from one (`apiKey: { file }`); closed with the provider. */
  keyFile: ApiKeyFile | undefined;
  /** True for OpenAI's own API (the `dialect` setting), which differs from compatible servers in small ways (max_completion_tokens, no top_k). */
  isOpenAI: boolean;
}

export function createOpenAICompatibleConnection(
  config: OpenAICompatibleProviderConfig,
  context: ProviderContext = {},
): OpenAICompatibleConnection {
  const client = new UpstreamHttpClient({ baseUrl: config.baseUrl, timeoutMs: config.timeoutMs, apiKey: config.apiKeyValue });
  const headers: Record<string, string> = { ...config.headers };
  if (config.apiKeyValue !== undefined) headers['authorization'] = `Bearer ${config.apiKeyValue}`;
  // A key read from a file follows the file: the headers object every model shares is updated in place.
  const keyFile = followApiKeyFile(config, client, context.logger, (key) => (headers['authorization'] = `Bearer ${key}`));
  const dialect = config.dialect ?? (new URL(config.baseUrl).hostname === 'api.openai.com' ? 'openai' : 'generic');
  return { client, headers, keyFile, isOpenAI: dialect === 'openai' };
}

export function createOpenAICompatibleProvider(config: OpenAICompatibleProviderConfig, context: ProviderContext): ProviderInstance {
  const connection = createOpenAICompatibleConnection(config, context);
  const languageModels = new Map<string, LanguageModel>();
  return {
    languageModel(upstreamModel: string): LanguageModel {
      let model = languageModels.get(upstreamModel);
      if (model === undefined) {
        model = new OpenAICompatibleChatLanguageModel(connection.client, {
          upstreamModel,
          headers: connection.headers,
          maxTokensField: connection.isOpenAI ? 'max_completion_tokens' : 'max_tokens',
          acceptsTopK: !connection.isOpenAI,
        });
        languageModels.set(upstreamModel, model);
      }
      return model;
    },
    embeddingModel: (upstreamModel) =>
      new OpenAICompatibleEmbeddingModel(connection.client, { upstreamModel, headers: connection.headers }),
    moderationModel: (upstreamModel) =>
      new OpenAICompatibleModerationModel(connection.client, { upstreamModel, headers: connection.headers }),
    imageModel: (upstreamModel) =>
      new OpenAICompatibleImageModel(connection.client, {
        upstreamModel,
        headers: connection.headers,
        allowPrivateAddresses: config.allowPrivateImageUrls === true,
      }),
    close: async () => {
      connection.keyFile?.close();
      await connection.client.close();
    },
  };
}
