/**
 * Factory of the `builtin` provider kind: engines that run inside Switchyard with nothing to download
 * (config/builtin-catalogue.ts lists their models). A model's `upstreamModel` names its engine. Each
 * engine kind has a table below; plugging in a new engine is one line in its table. Engines are
 * created on first use and kept; `close()` releases those that hold resources (workers, native
 * handles) through their optional `close()`.
 */
import type { ResolvedProviderConfig } from '../../config/index.ts';
import type { EmbeddingModel, ImageModel, LanguageModel, ModerationModel, ProviderInstance } from '../../core/language-model.ts';
import { invalidParameter } from '../../core/service-error.ts';
import type { ProviderContext } from '../shared/provider-context.ts';
import { EchoLanguageModel } from './echo/echo-language-model.ts';
import { createBuiltinEmbeddingEngine } from './embedding/embedding-model.ts';
import { createBuiltinImageModel } from './image/image-procedural-model.ts';
import { createBuiltinModerationEngine } from './moderation/moderation-model.ts';

export type BuiltinProviderConfig = Extract<ResolvedProviderConfig, { kind: 'builtin' }>;

/** Creates one engine; called at most once per engine name and provider instance. */
type EngineFactory<Model> = (context: ProviderContext) => Model;

/** An engine may hold resources; the provider's `close()` calls this. */
interface Closable {
  close?(): Promise<void> | void;
}

const LANGUAGE_ENGINES: Record<string, EngineFactory<LanguageModel>> = {
  echo: () => new EchoLanguageModel(),
};

// The embedding and moderation engines of one provider instance share one sentence-encoder worker
// (leased by the context object, which is per provider instance).
const EMBEDDING_ENGINES: Record<string, EngineFactory<EmbeddingModel>> = {
  'universal-sentence-encoder-lite': (context) => createBuiltinEmbeddingEngine(context),
};
const MODERATION_ENGINES: Record<string, EngineFactory<ModerationModel>> = {
  moderation: (context) => createBuiltinModerationEngine(context),
};
const IMAGE_ENGINES: Record<string, EngineFactory<ImageModel>> = {
  procedural: () => createBuiltinImageModel(),
};

/** Creates engines on first use and remembers them, per engine kind. */
class EngineSet<Model> {
  private readonly created = new Map<string, Model>();

  constructor(
    private readonly factories: Record<string, EngineFactory<Model>>,
    private readonly kind: string,
    private readonly context: ProviderContext,
  ) {}

  get(engine: string): Model {
    let model = this.created.get(engine);
    if (model === undefined) {
      const factory = Object.hasOwn(this.factories, engine) ? this.factories[engine] : undefined;
      if (factory === undefined) {
        const known = Object.keys(this.factories);
        throw invalidParameter(
          'model',
          `The built-in provider has no ${this.kind} engine named '${engine}'.` +
            (known.length > 0 ? ` Known engines: ${known.join(', ')}.` : ''),
        );
      }
      model = factory(this.context);
      this.created.set(engine, model);
    }
    return model;
  }

  async close(): Promise<void> {
    const models = [...this.created.values()];
    this.created.clear();
    await Promise.all(models.map((model) => (model as Closable).close?.()));
  }
}

export function createBuiltinProvider(_config: BuiltinProviderConfig, context: ProviderContext): ProviderInstance {
  const languageModels = new EngineSet(LANGUAGE_ENGINES, 'chat', context);
  const embeddingModels = new EngineSet(EMBEDDING_ENGINES, 'embedding', context);
  const moderationModels = new EngineSet(MODERATION_ENGINES, 'moderation', context);
  const imageModels = new EngineSet(IMAGE_ENGINES, 'image', context);
  return {
    languageModel: (engine) => languageModels.get(engine),
    embeddingModel: (engine) => embeddingModels.get(engine),
    moderationModel: (engine) => moderationModels.get(engine),
    imageModel: (engine) => imageModels.get(engine),
    async close(): Promise<void> {
      await Promise.all([languageModels.close(), embeddingModels.close(), moderationModels.close(), imageModels.close()]);
    },
  };
}
