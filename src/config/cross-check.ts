/** Cross-checks of a parsed config: the references between tiers, providers, models and fallbacks. */
import type { z } from 'zod';
import { ConfigError } from './config-error.ts';
import type { ResolvedProviderConfig } from './resolved-provider.ts';
import type { configSchema, ModelConfig, TierConfig } from './schema.ts';

export function crossCheck(
  config: z.infer<typeof configSchema>,
  tiers: Record<string, TierConfig>,
  providers: Record<string, ResolvedProviderConfig>,
  models: ModelConfig[],
): void {
  const { host, port, operationsHost, operationsPort } = config.server;
  if (operationsPort !== undefined && operationsPort !== 0 && operationsPort === port && (operationsHost ?? host) === host) {
    throw new ConfigError(
      `OPERATIONS_PORT (server.operationsPort) ${operationsPort} is the public PORT: give the operations listener a port of its own, or unset it to serve everything on one.`,
    );
  }
  if (!(config.defaultTier in tiers)) {
    throw new ConfigError(
      `defaultTier "${config.defaultTier}" is not one of the configured tiers (${Object.keys(tiers).join(', ')}). Add it under tiers or pick one of those.`,
    );
  }
  for (const [retired, replacement] of Object.entries(config.retiredTiers)) {
    if (retired in tiers) {
      throw new ConfigError(
        `retiredTiers.${retired}: "${retired}" is still a configured tier. Remove it from tiers (tiers.${retired}: null) or from retiredTiers.`,
      );
    }
    if (!(replacement in tiers)) {
      throw new ConfigError(
        `retiredTiers.${retired} names "${replacement}", which is not a configured tier. Use one of: ${Object.keys(tiers).join(', ')}.`,
      );
    }
  }
  const names = new Map<string, string>();
  models.forEach((model, index) => {
    if (!(model.provider in providers)) {
      throw new ConfigError(
        `models[${index}].provider "${model.provider}" is not a configured provider. Add it under providers or use one of: ${Object.keys(providers).join(', ')}.`,
      );
    }
    const deploymentProviders = new Set<string>();
    model.deployments?.forEach((deployment, deploymentIndex) => {
      if (!(deployment.provider in providers)) {
        throw new ConfigError(
          `models[${index}].deployments[${deploymentIndex}].provider "${deployment.provider}" is not a configured provider. Add it under providers or use one of: ${Object.keys(providers).join(', ')}.`,
        );
      }
      if (deploymentProviders.has(deployment.provider)) {
        throw new ConfigError(
          `models[${index}].deployments[${deploymentIndex}]: provider "${deployment.provider}" is listed twice. Each deployment of a model needs its own provider entry (declare a second provider with the same baseUrl, or list its keys under apiKeys).`,
        );
      }
      deploymentProviders.add(deployment.provider);
    });
    for (const name of [model.id, ...model.aliases]) {
      const previous = names.get(name);
      if (previous !== undefined) {
        throw new ConfigError(
          `models[${index}]: the name "${name}" is already used by model "${previous}". Model ids and aliases must be unique.`,
        );
      }
      names.set(name, model.id);
    }
  });
  models.forEach((model, index) => {
    model.fallbacks.forEach((fallback, fallbackIndex) => {
      if (!names.has(fallback)) {
        throw new ConfigError(`models[${index}].fallbacks[${fallbackIndex}] "${fallback}" is not a configured model id or alias.`);
      }
    });
    if (model.capabilities.includes('image_generation') && (model.imageSizes === undefined || model.imageSizes.length === 0)) {
      throw new ConfigError(`models[${index}] has the image_generation capability but no imageSizes. Add e.g. imageSizes: ["1024x1024"].`);
    }
  });
}
