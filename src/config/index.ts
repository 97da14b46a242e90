export {
  loadConfig,
  stableCreatedSeconds,
  ConfigError,
  type Config,
  type FilesStoreConfig,
  type LoadConfigOptions,
  type ResolvedProviderConfig,
} from './load-config.ts';
export {
  PERMISSIONS,
  CAPABILITIES,
  ROUTING_STRATEGIES,
  BUDGET_PERIODS,
  type BudgetPeriod,
  type Permission,
  type Capability,
  type ModelConfig,
  type ProviderConfig,
  type TierConfig,
  type ConfigInput,
  type DeploymentConfig,
  type DeploymentTarget,
  type RoutingStrategyName,
} from './schema.ts';
export { BUILTIN_PROVIDER_ID } from './builtin-catalogue.ts';
export { TRACE_SAMPLERS, type TracingConfig, type TraceSamplerName } from './tracing-config.ts';
export { effectiveTiers, ownTier, tierSettingsFor, unconfiguredTiers, droppedTiersError, droppedPlansError } from './tiers.ts';
export { checkModelFiles } from './model-files.ts';
export type { AlertsConfig } from './alerts-config.ts';
export type { SsoConfig, SsoProviderConfig, SsoRule } from './sso-config.ts';
export type { ResponseCacheConfig, ResponseCacheOrganizationConfig } from './response-cache-config.ts';
