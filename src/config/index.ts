export {
  loadConfig,
  stableCreatedSeconds,
  ConfigError,
  type Config,
  type FilesStoreConfig,
  type LoadConfigOptions,
  type ResolvedProviderConfig,
} from './load-config.ts';
export { PERMISSIONS, CAPABILITIES, type Permission, type Capability, type ModelConfig, type ProviderConfig, type TierConfig, type ConfigInput } from './schema.ts';
export { BUILTIN_PROVIDER_ID } from './builtin-catalogue.ts';
