/**
 * Model resolution for the generation service: a model id or alias to its catalogue entry and provider,
 * the capabilities a request needs checked against it (404 unknown model, 400 naming the field that
 * needs a missing capability), and the fallbacks that can stand in for it.
 */
import type { Capability, Config, ModelConfig, ResolvedProviderConfig } from '../../config/index.ts';
import { didYouMean } from '../../core/closest-name.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidParameter, notFound, serverError } from '../../core/service-error.ts';
import { requiredCapabilities, type CapabilityNeed } from './required-capabilities.ts';

/** A catalogue model with the config of the provider that serves it. */
export interface ResolvedModel {
  model: ModelConfig;
  provider: ResolvedProviderConfig;
}

/** The model a generation request resolved to, with the capabilities it needs (fallbacks need them too). */
export interface ResolvedGeneration extends ResolvedModel {
  needs: readonly CapabilityNeed[];
}

/** Which capabilities a caller needs beyond the request's own, and the fields to blame for missing ones. */
export interface CapabilityOptions {
  /** Capabilities the caller needs beyond what the request itself shows, e.g. `['streaming']`. */
  capabilities?: readonly Capability[];
  /**
   * Request field named in the 400 when the model lacks a capability, per capability, in the caller's
   * wire format (e.g. `{ vision: 'messages[1].content[0].image_url.url', json_mode: 'text.format' }`).
   * Defaults: chat completions names (`tools`, `response_format`, `thinking`, `stream`) and
   * `messages[i].content[j]` of the canonical request for images.
   */
  capabilityParams?: Partial<Record<Capability, string>>;
}

export class ModelCatalogue {
  private readonly modelsByName = new Map<string, ModelConfig>();
  private readonly providers: Readonly<Record<string, ResolvedProviderConfig>>;

  constructor(config: Pick<Config, 'models' | 'providers'>) {
    for (const model of config.models) {
      for (const name of [model.id, ...model.aliases]) if (!this.modelsByName.has(name)) this.modelsByName.set(name, model);
    }
    this.providers = config.providers;
  }

  /**
   * Finds a model by id or alias and checks it has every capability in `needs`.
   * Unknown name: 404 `model_not_found` (param `model`). Missing capability: 400 `invalid_parameter`
   * naming the capability, with `param` (default `model`) as the blamed request field.
   */
  resolve(modelName: string, needs: readonly Capability[] = [], param = 'model'): ResolvedModel {
    return this.resolveNeeds(
      modelName,
      needs.map((capability) => ({ capability, param })),
    );
  }

  /**
   * Checks that a resolved model has every capability the request needs (400 naming the field that
   * needs a missing one).
   */
  checkRequest(resolved: ResolvedModel, request: GenerationRequest, options: CapabilityOptions): ResolvedGeneration {
    const needs = requiredCapabilities(request, options.capabilities, options.capabilityParams);
    for (const need of needs) assertCapability(resolved.model, need);
    // Written out: a spread with an added field takes V8's slow path (it showed in the gateway's profile).
    return { model: resolved.model, provider: resolved.provider, needs };
  }

  private resolveNeeds(modelName: string, needs: readonly CapabilityNeed[]): ResolvedModel {
    const model = this.modelsByName.get(modelName);
    if (model === undefined) {
      const hint = didYouMean(modelName, this.modelsByName.keys());
      throw notFound('model_not_found', `The model '${modelName}' does not exist or you do not have access to it.${hint}`, 'model');
    }
    for (const need of needs) assertCapability(model, need);
    const provider = this.providers[model.provider];
    if (provider === undefined) throw serverError('internal_error', `The model '${model.id}' has no configured provider.`);
    return { model, provider };
  }

  /** The model's fallbacks that exist and have every needed capability, in configured order. */
  fallbacksOf(model: ModelConfig, needs: readonly CapabilityNeed[]): ResolvedModel[] {
    const fallbacks: ResolvedModel[] = [];
    const seen = new Set([model.id]);
    for (const name of model.fallbacks) {
      const candidate = this.modelsByName.get(name);
      if (candidate === undefined || seen.has(candidate.id)) continue;
      seen.add(candidate.id);
      const provider = this.providers[candidate.provider];
      if (provider === undefined || !needs.every((need) => candidate.capabilities.includes(need.capability))) continue;
      fallbacks.push({ model: candidate, provider });
    }
    return fallbacks;
  }
}

function assertCapability(model: ModelConfig, need: CapabilityNeed): void {
  if (model.capabilities.includes(need.capability)) return;
  throw invalidParameter(
    need.param,
    `The model '${model.id}' does not support '${need.capability}', which '${need.param}' requires. Choose a model whose capabilities include '${need.capability}'.`,
  );
}
