/**
 * The deployments of every catalogue model, built once from the config: `provider:` alone is one
 * deployment; `deployments:` lists several; a provider with several upstream keys (`apiKeys`) makes
 * one deployment per key, the configured weight split evenly between them.
 */
import type { Config, DeploymentTarget, ModelConfig, ResolvedProviderConfig, RoutingStrategyName } from '../../../config/index.ts';
import type { DeploymentLimits, DeploymentRef } from '../../../limits/deployment-state.ts';

/** Cooldown after a failure without retry-after, when the provider sets no `cooldownMs`, ms. */
export const DEFAULT_COOLDOWN_MS = 5_000;

export interface Deployment {
  /** Provider id, `#n` appended for the n-th key of a provider with several: the header and ledger value. */
  readonly id: string;
  /** Key of its shared state (model id + deployment id). */
  readonly ref: DeploymentRef;
  readonly target: DeploymentTarget;
  readonly provider: ResolvedProviderConfig;
  readonly weight: number;
  readonly limits: DeploymentLimits;
  /** True when the upstream's per-minute limits must be counted. */
  readonly limited: boolean;
  readonly cooldownMs: number;
}

export interface RoutedModel {
  readonly modelId: string;
  readonly strategy: RoutingStrategyName;
  readonly deployments: readonly Deployment[];
  /** One deployment without limits: routed without any state (the hot path of most models). */
  readonly direct: boolean;
  /** Some deployment counts tokens per minute (the prompt must be counted before routing). */
  readonly countsTokens: boolean;
}

function keyCountOf(provider: ResolvedProviderConfig): number {
  return provider.apiKeyValues?.length ?? 1;
}

export function routedModel(model: ModelConfig, providers: Readonly<Record<string, ResolvedProviderConfig>>): RoutedModel {
  const configured = model.deployments ?? [{ provider: model.provider, weight: 1 }];
  const deployments: Deployment[] = [];
  for (const entry of configured) {
    const provider = providers[entry.provider];
    if (provider === undefined) continue; // config loading already refused unknown providers
    const keys = keyCountOf(provider);
    const upstreamModel = entry.upstreamModel ?? model.upstreamModel ?? model.id;
    const limits = { requestsPerMinute: entry.requestsPerMinute ?? 0, tokensPerMinute: entry.tokensPerMinute ?? 0 };
    for (let keyIndex = 0; keyIndex < keys; keyIndex++) {
      const id = keys > 1 ? `${entry.provider}#${keyIndex + 1}` : entry.provider;
      deployments.push({
        id,
        ref: { model: model.id, deployment: id },
        target: { provider: entry.provider, keyIndex, upstreamModel },
        provider,
        weight: entry.weight / keys,
        limits,
        limited: limits.requestsPerMinute > 0 || limits.tokensPerMinute > 0,
        cooldownMs: provider.cooldownMs ?? DEFAULT_COOLDOWN_MS,
      });
    }
  }
  return {
    modelId: model.id,
    strategy: model.routing ?? 'weighted',
    deployments,
    direct: deployments.length === 1 && !deployments[0]!.limited,
    countsTokens: deployments.some((deployment) => deployment.limits.tokensPerMinute > 0),
  };
}

/** Every catalogue model's deployments, by model id. */
export function deploymentTable(config: Pick<Config, 'models' | 'providers'>): Map<string, RoutedModel> {
  const table = new Map<string, RoutedModel>();
  for (const model of config.models) table.set(model.id, routedModel(model, config.providers));
  return table;
}
