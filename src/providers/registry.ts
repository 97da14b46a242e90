/**
 * The only file that names provider kinds (docs/design.md: "a new provider is a new folder plus one line in
 * a registry"). It maps `ProviderConfig.kind` to the factory of that kind's folder, instantiates every
 * configured provider once, and hands out the model objects that services use. Nothing else may test
 * a provider kind or id.
 */
import { type Config, type DeploymentTarget, type ModelConfig, type ProviderConfig, type ResolvedProviderConfig } from '../config/index.ts';
import type { EmbeddingModel, ImageModel, LanguageModel, ModerationModel, ProviderInstance } from '../core/language-model.ts';
import { invalidParameter } from '../core/service-error.ts';
import { createAnthropicProvider } from './anthropic/anthropic-provider.ts';
import { createBuiltinProvider } from './builtin/builtin-provider.ts';
import { createLlamaCppProvider } from './llama-cpp/llama-cpp-provider.ts';
import { createOpenAICompatibleProvider } from './openai-compatible/openai-compatible-provider.ts';
import type { ProviderContext } from './shared/provider-context.ts';

export type ProviderKind = ProviderConfig['kind'];

/** Builds one provider instance from its resolved config (API key already read from the environment). */
export type ProviderFactory<Kind extends ProviderKind = ProviderKind> = (
  config: Extract<ResolvedProviderConfig, { kind: Kind }>,
  context: ProviderContext,
) => ProviderInstance;

const PROVIDER_FACTORIES: { [Kind in ProviderKind]: ProviderFactory<Kind> } = {
  'openai-compatible': createOpenAICompatibleProvider,
  anthropic: createAnthropicProvider,
  builtin: createBuiltinProvider,
  'llama-cpp': createLlamaCppProvider,
};

/** Instantiates one provider through the factory of its kind. */
export function createProvider(config: ResolvedProviderConfig, context: ProviderContext = {}): ProviderInstance {
  // The factory table is keyed by kind, so the config given matches the factory's parameter.
  const factory = PROVIDER_FACTORIES[config.kind] as ProviderFactory;
  return factory(config as never, context);
}

export class ProviderRegistry {
  private readonly instances = new Map<string, ProviderInstance>();
  /**
   * Providers with several upstream keys (`apiKeys`): one instance per key, index 0 being the one in
   * `instances`. Each key is a deployment of its own (services/generation/routing).
   */
  private readonly keyedInstances = new Map<string, ProviderInstance[]>();

  /**
   * Instantiates every provider once. Throws ConfigError when a configured kind cannot run here;
   * providers created before the failure are closed.
   */
  constructor(providers: Readonly<Record<string, ResolvedProviderConfig>>, context: ProviderContext = {}) {
    try {
      for (const [id, config] of Object.entries(providers)) {
        const instance = createProvider(config, context);
        this.instances.set(id, instance);
        const keys = config.apiKeyValues;
        if (keys !== undefined && keys.length > 1) {
          const perKey = [instance];
          this.keyedInstances.set(id, perKey);
          keys.forEach((key, index) => {
            if (index === 0) return;
            // Each key follows its own file, when it was read from one.
            const { apiKeyFile: _first, ...rest } = config;
            const file = config.apiKeyFiles?.[index];
            perKey.push(createProvider({ ...rest, apiKeyValue: key, ...(file === undefined ? {} : { apiKeyFile: file }) }, context));
          });
        }
      }
    } catch (error) {
      void this.close();
      throw error;
    }
  }

  static fromConfig(config: Pick<Config, 'providers'>, context: ProviderContext = {}): ProviderRegistry {
    return new ProviderRegistry(config.providers, context);
  }

  /** Ids of the configured providers. */
  providerIds(): string[] {
    return [...this.instances.keys()];
  }

  /** The instance of a configured provider. Throws for an id the config does not have (a programming error). */
  provider(id: string): ProviderInstance {
    const instance = this.instances.get(id);
    if (instance === undefined) throw new Error(`No provider with id '${id}' is configured.`);
    return instance;
  }

  /**
   * The chat model behind a catalogue model: on `deployment` when given (the router's choice: a
   * provider, one of its keys and an upstream name), else on the model's own provider. 400
   * `invalid_parameter` (param `model`) when the provider serves no chat.
   */
  languageModel(model: ModelConfig, deployment?: DeploymentTarget): LanguageModel {
    const instance = deployment === undefined ? this.provider(model.provider) : this.keyInstance(deployment.provider, deployment.keyIndex);
    if (instance.languageModel === undefined) throw cannotServe(model, 'chat');
    return instance.languageModel(deployment?.upstreamModel ?? upstreamName(model), { defaultMaxOutputTokens: model.maxOutputTokens });
  }

  /** Upstream keys of a provider: 1 unless it lists several under `apiKeys`. */
  keyCount(providerId: string): number {
    return this.keyedInstances.get(providerId)?.length ?? 1;
  }

  private keyInstance(providerId: string, keyIndex: number): ProviderInstance {
    if (keyIndex === 0) return this.provider(providerId);
    const instance = this.keyedInstances.get(providerId)?.[keyIndex];
    if (instance === undefined) throw new Error(`Provider '${providerId}' has no key number ${keyIndex + 1}.`);
    return instance;
  }

  embeddingModel(model: ModelConfig): EmbeddingModel {
    const instance = this.provider(model.provider);
    if (instance.embeddingModel === undefined) throw cannotServe(model, 'embeddings');
    return instance.embeddingModel(upstreamName(model));
  }

  moderationModel(model: ModelConfig): ModerationModel {
    const instance = this.provider(model.provider);
    if (instance.moderationModel === undefined) throw cannotServe(model, 'moderation');
    return instance.moderationModel(upstreamName(model));
  }

  imageModel(model: ModelConfig): ImageModel {
    const instance = this.provider(model.provider);
    if (instance.imageModel === undefined) throw cannotServe(model, 'image generation');
    return instance.imageModel(upstreamName(model));
  }

  /** Closes every provider (pools, workers, native handles). Safe to call twice. */
  async close(): Promise<void> {
    const instances = [...this.instances.values(), ...[...this.keyedInstances.values()].flatMap((perKey) => perKey.slice(1))];
    this.instances.clear();
    this.keyedInstances.clear();
    await Promise.all(instances.map((instance) => instance.close?.()));
  }
}

function upstreamName(model: ModelConfig): string {
  return model.upstreamModel ?? model.id;
}

function cannotServe(model: ModelConfig, what: string): Error {
  return invalidParameter('model', `The model '${model.id}' cannot be used for ${what}.`);
}
