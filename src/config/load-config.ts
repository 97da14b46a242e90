/**
 * The only reader of process.env and of the config file (docs/design.md convention 7). Precedence: an
 * explicit override (CLI flag, test) beats an environment variable, which beats the config file, which
 * beats the defaults. The result is validated, cross-checked, frozen and injected everywhere.
 */
import { resolve } from 'node:path';
import type { z } from 'zod';
import { BUILTIN_MODELS, BUILTIN_PROVIDER, BUILTIN_PROVIDER_ID } from './builtin-catalogue.ts';
import { readConfigFile, isPlainObject, mergeLayers, describeIssuePath } from './config-file.ts';
import { crossCheck } from './cross-check.ts';
import { fromEnvironment } from './environment.ts';
import { resolveFilesStore, type FilesStoreConfig } from './files-store.ts';
import { configSchema, type ConfigInput, type ModelConfig, type ProviderConfig, type TierConfig } from './schema.ts';
import type { TracingConfig } from './tracing-config.ts';
import type { AlertsConfig } from './alerts-config.ts';
import { resolveSsoConfig, type SsoConfig } from './sso-config.ts';
import type { ResponseCacheConfig } from './response-cache-config.ts';
import { withEnvironmentFile } from './environment-file.ts';
import { ConfigError } from './config-error.ts';
import { resolvePricing } from './resolve-pricing.ts';
import type { ResolvedProviderConfig } from './resolved-provider.ts';
import { readSecretFile, secretFilePath } from './secret-file.ts';
import { mergeTiers } from './tiers.ts';

export { ConfigError };

export type { ResolvedProviderConfig };

export type { FilesStoreConfig };

export interface Config {
  readonly operator: string;
  /** `org-<operator>-ai`: organization of keys created without `--org`. */
  readonly defaultOrganization: string;
  readonly server: z.infer<typeof configSchema>['server'];
  /** Absolute path of the data directory. */
  readonly dataDir: string;
  /** `sqlite:<absolute path>` or `postgres://...`. */
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  /** Start of every Redis key written (default `switchyard:`). */
  readonly redisPrefix: string;
  readonly logLevel: z.infer<typeof configSchema>['logLevel'];
  /** Resolved: never `auto`. */
  readonly limitsBackend: 'memory' | 'redis' | 'off';
  /** `spec` or `compatible` (env REQUEST_VALIDATION): how strictly the request decoders read bodies. */
  readonly requestValidation: 'spec' | 'compatible';
  readonly bootstrapKey: boolean;
  readonly filesStore: FilesStoreConfig;
  /** The default tiers merged with the config's (tier-policy.ts reads them with the retired ones). */
  readonly tiers: Readonly<Record<string, TierConfig>>;
  /** Retired tier name -> the configured tier whose limits its existing keys get. */
  readonly retiredTiers: Readonly<Record<string, string>>;
  readonly defaultTier: string;
  readonly providers: Readonly<Record<string, ResolvedProviderConfig>>;
  readonly models: readonly ModelConfig[];
  /** This instance's name in batch leases; undefined: kept in `<dataDir>/instance-id`. */
  readonly instanceId: string | undefined;
  readonly batches: z.infer<typeof configSchema>['batches'];
  readonly limits: z.infer<typeof configSchema>['limits'];
  readonly routingState: z.infer<typeof configSchema>['routingState'];
  readonly dependencies: z.infer<typeof configSchema>['dependencies'];
  /** Traces: on when `tracing.endpoint` is set (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly tracing: TracingConfig;
  /** SMTP for invitations and set-password links (SMTP_URL, SMTP_FROM); no `url`: links go to the log. */
  readonly smtp: z.infer<typeof configSchema>['smtp'];
  /** Invitations per organization per hour and per day (INVITATIONS_PER_HOUR, INVITATIONS_PER_DAY). */
  readonly invitations: z.infer<typeof configSchema>['invitations'];
  /** Budget alerts: the projected rule, emails, webhooks and their delivery (config/alerts-config.ts). */
  readonly alerts: AlertsConfig;
  /** Single sign-on: providers with their client secrets read, claim rules, SSO-only policy (config/sso-config.ts). */
  readonly sso: SsoConfig;
  /** The response cache (config/response-cache-config.ts; README "Response cache"). */
  readonly responseCache: ResponseCacheConfig;
}

export interface LoadConfigOptions {
  /** Environment to read (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Config file path; defaults to `SWITCHYARD_CONFIG`. */
  configFile?: string;
  /** An environment file (systemd `EnvironmentFile=` format) whose values go over `env`; defaults to `SWITCHYARD_ENV_FILE`. */
  environmentFile?: string;
  /** Values that beat everything else (CLI flags, tests). */
  overrides?: ConfigInput;
}

function resolveSecret(
  secret: string | { env: string } | { file: string } | undefined,
  env: NodeJS.ProcessEnv,
  where: string,
): string | undefined {
  if (secret === undefined) return undefined;
  if (typeof secret === 'string') return secret;
  if ('file' in secret) return readSecretFile(secretFilePath(secret)!, `${where}${where.endsWith(']') ? '' : '.apiKey'}`);
  const value = env[secret.env];
  if (value === undefined || value === '') {
    throw new ConfigError(
      `${where}${where.endsWith(']') ? '' : '.apiKey'} names the environment variable ${secret.env}, which is not set. Export ${secret.env} or remove apiKey.`,
    );
  }
  return value;
}

/** Every configured provider with its secrets read (`apiKey`, `apiKeys`: a value, `{ env }` or `{ file }`). */
function resolveProviders(configured: Record<string, ProviderConfig>, env: NodeJS.ProcessEnv): Record<string, ResolvedProviderConfig> {
  const providers: Record<string, ResolvedProviderConfig> = {};
  for (const [id, provider] of Object.entries(configured)) {
    const keys: string[] = [];
    const files: (string | undefined)[] = [];
    if ('apiKey' in provider) {
      const first = resolveSecret(provider.apiKey, env, `providers.${id}`);
      if (first !== undefined) {
        keys.push(first);
        files.push(secretFilePath(provider.apiKey));
      }
    }
    if ('apiKeys' in provider) {
      provider.apiKeys?.forEach((secret, index) => {
        keys.push(resolveSecret(secret, env, `providers.${id}.apiKeys[${index}]`)!);
        files.push(secretFilePath(secret));
      });
    }
    const resolved: ResolvedProviderConfig = { ...provider, id };
    if (keys.length > 0) resolved.apiKeyValue = keys[0]!;
    if (keys.length > 1) resolved.apiKeyValues = keys;
    if (files[0] !== undefined) resolved.apiKeyFile = files[0];
    if (keys.length > 1 && files.some((file) => file !== undefined)) resolved.apiKeyFiles = files;
    providers[id] = resolved;
  }
  return providers;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const givenEnv = options.env ?? process.env;
  const env = withEnvironmentFile(givenEnv, options.environmentFile ?? givenEnv['SWITCHYARD_ENV_FILE']);
  const configFile = options.configFile ?? env['SWITCHYARD_CONFIG'];
  const fileLayer = configFile ? readConfigFile(configFile) : {};
  if (configFile && !isPlainObject(fileLayer)) {
    throw new ConfigError(`The config file ${configFile} must hold an object at the top level.`);
  }
  const merged = mergeLayers(fileLayer, fromEnvironment(env), options.overrides);
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  - ${describeIssuePath(issue.path)}: ${issue.message}`);
    throw new ConfigError(
      `Invalid configuration${configFile ? ` (${configFile})` : ''}:\n${problems.join('\n')}\nFix these fields and start again.`,
    );
  }
  const config = parsed.data;
  const tiers = mergeTiers(config.tiers);

  const providers = resolveProviders(config.providers, env);
  const models: ModelConfig[] = config.models.map((model, index) => {
    if (model.provider !== undefined && model.deployments !== undefined) {
      throw new ConfigError(
        `models[${index}] ("${model.id}") has both provider and deployments. Use provider for one backend, or list every backend under deployments.`,
      );
    }
    const provider = model.provider ?? model.deployments?.[0]?.provider;
    if (provider === undefined)
      throw new ConfigError(
        `models[${index}] ("${model.id}") names no provider. Add provider: <id>, or deployments: [{ provider: <id> }, ...].`,
      );
    const pricing = resolvePricing(model.pricing, { ...model, index });
    return { ...model, provider, pricing, created: model.created ?? stableCreatedSeconds(model.id) };
  });
  if (config.builtinModels) {
    providers[BUILTIN_PROVIDER_ID] ??= { ...BUILTIN_PROVIDER, id: BUILTIN_PROVIDER_ID };
    const taken = new Set(models.flatMap((model) => [model.id, ...model.aliases]));
    models.push(...BUILTIN_MODELS.filter((model) => !taken.has(model.id)));
  }
  crossCheck(config, tiers, providers, models);

  const dataDir = resolve(config.dataDir);
  const databaseUrl = config.databaseUrl ?? `sqlite:${resolve(dataDir, 'switchyard.db')}`;
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(
      `DATABASE_URL "${databaseUrl.replace(/\/\/[^@]*@/, '//***@')}" is not supported. Use sqlite:<path> or postgres://user@host:port/database.`,
    );
  }
  if (config.limitsBackend === 'redis' && config.redisUrl === undefined) {
    throw new ConfigError('limitsBackend is "redis" but no REDIS_URL is set. Set REDIS_URL=redis://host:6379 or use limitsBackend: auto.');
  }
  if (config.redisUrl !== undefined && !/^rediss?:\/\//.test(config.redisUrl)) {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://, e.g. redis://127.0.0.1:6379.');
  }

  return deepFreeze({
    operator: config.operator,
    defaultOrganization: `org-${config.operator}-ai`,
    server: config.server,
    dataDir,
    databaseUrl,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    logLevel: config.logLevel,
    limitsBackend: config.limitsBackend === 'auto' ? (config.redisUrl === undefined ? 'memory' : 'redis') : config.limitsBackend,
    requestValidation: config.requestValidation,
    bootstrapKey: config.bootstrapKey,
    filesStore: resolveFilesStore(config.filesStore, dataDir, databaseUrl, env),
    tiers,
    retiredTiers: Object.assign(Object.create(null) as Record<string, string>, config.retiredTiers),
    defaultTier: config.defaultTier,
    providers,
    models,
    instanceId: config.instanceId,
    batches: config.batches,
    limits: config.limits,
    routingState: config.routingState,
    dependencies: config.dependencies,
    tracing: config.tracing,
    smtp: config.smtp,
    invitations: config.invitations,
    alerts: config.alerts,
    sso: resolveSsoConfig(config.sso),
    responseCache: config.responseCache,
  });
}

/** 2024-01-01T00:00:00Z: the start of the range a model's derived `created` falls in. */
export const DERIVED_CREATED_EPOCH_SECONDS = 1_704_067_200;
const SECONDS_PER_YEAR = 365 * 24 * 60 * 60;

/**
 * `created` of a configured model that names none: a second within 2024 taken from the FNV-1a hash of
 * its id, so the catalogue shows the same value on every start and every instance.
 */
export function stableCreatedSeconds(modelId: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(modelId, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return DERIVED_CREATED_EPOCH_SECONDS + (hash % SECONDS_PER_YEAR);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
