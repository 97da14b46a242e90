/**
 * The only reader of process.env and of the config file (docs/design.md convention 7). Precedence: an
 * explicit override (CLI flag, test) beats an environment variable, which beats the config file, which
 * beats the defaults. The result is validated, cross-checked, frozen and injected everywhere.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import { BUILTIN_MODELS, BUILTIN_PROVIDER, BUILTIN_PROVIDER_ID } from './builtin-catalogue.ts';
import { configSchema, type ConfigInput, type ModelConfig, type ProviderConfig, type TierConfig } from './schema.ts';
import { tracingFromEnvironment, type TracingConfig } from './tracing-config.ts';
import { ConfigError } from './config-error.ts';
import { readSecretFile, secretFilePath } from './secret-file.ts';
import { mergeTiers } from './tiers.ts';

export { ConfigError };

/**
 * A provider with its secrets read: `apiKeyValue` is its first key (`apiKey`, else the first of
 * `apiKeys`); `apiKeyValues` lists every key when there are several (each one a deployment of its own).
 */
export type ResolvedProviderConfig = ProviderConfig & {
  id: string;
  apiKeyValue?: string;
  apiKeyValues?: readonly string[];
  /** The file `apiKeyValue` was read from (`apiKey: { file }`, re-read on change); `apiKeyFiles` aligns with `apiKeyValues`. */
  apiKeyFile?: string;
  apiKeyFiles?: readonly (string | undefined)[];
};

/** Where file bytes live (the resolved `filesStore` setting). */
export type FilesStoreConfig =
  | { readonly kind: 'local'; /** Absolute path, `<dataDir>/files`. */ readonly directory: string }
  | { readonly kind: 'postgres'; /** The service's own Postgres database. */ readonly databaseUrl: string }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      /** Key prefix without surrounding slashes; '' for the bucket root. */
      readonly prefix: string;
      /** AWS_ENDPOINT_URL(_S3): an S3-compatible server; path-style addressing is used with it. */
      readonly endpoint: string | undefined;
      readonly region: string;
      /** From AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; undefined leaves the SDK's own chain (instance roles...). */
      readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | undefined;
    };

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
}

export interface LoadConfigOptions {
  /** Environment to read (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Config file path; defaults to `SWITCHYARD_CONFIG`. */
  configFile?: string;
  /** Values that beat everything else (CLI flags, tests). */
  overrides?: ConfigInput;
}

/**
 * The YAML parser, loaded when a YAML config file is read (synchronously: yaml ships CommonJS too). An
 * instance configured by JSON or the environment alone does not keep its ~1 MB of heap.
 */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml.parse(text);
}

function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read the config file ${path} (${(error as Error).message}). Check SWITCHYARD_CONFIG.`);
  }
  try {
    return path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(`The config file ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
}

function integerFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed))
    throw new ConfigError(`${name}=${value} is not an integer. Set ${name} to a whole number, e.g. ${name}=8080.`);
  return parsed;
}

/** An on/off switch: `on`/`off`, `true`/`false`, `1`/`0`. */
function onOffFromEnv(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? '').toLowerCase();
  if (['on', 'true', '1'].includes(value)) return true;
  if (['off', 'false', '0'].includes(value)) return false;
  throw new ConfigError(`${name}=${env[name]} is not on or off. Set ${name}=on or ${name}=off.`);
}

/** TRUST_PROXY: `true`/`false`, a hop count, or comma-separated proxy addresses/CIDRs. */
function trustProxyFromEnv(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

function fromEnvironment(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const server: Record<string, unknown> = {};
  const port = integerFromEnv(env, 'PORT');
  if (port !== undefined) server['port'] = port;
  if (env['HOST']) server['host'] = env['HOST'];
  if (env['PUBLIC_BASE_URL']) server['publicBaseUrl'] = env['PUBLIC_BASE_URL'];
  if (env['TRUST_PROXY']) server['trustProxy'] = trustProxyFromEnv(env['TRUST_PROXY']);
  if (env['LOG_ACCESS']) server['accessLog'] = onOffFromEnv(env, 'LOG_ACCESS');
  if (env['OPERATIONS_TOKEN']) server['operationsToken'] = env['OPERATIONS_TOKEN'];
  if (env['DRAIN_DELAY_SECONDS']) {
    const delay = Number(env['DRAIN_DELAY_SECONDS']);
    if (!Number.isFinite(delay) || delay < 0) {
      throw new ConfigError(
        `DRAIN_DELAY_SECONDS=${env['DRAIN_DELAY_SECONDS']} is not a number of seconds. Set e.g. DRAIN_DELAY_SECONDS=10.`,
      );
    }
    server['drainDelaySeconds'] = delay;
  }
  const result: Record<string, unknown> = {};
  if (Object.keys(server).length > 0) result['server'] = server;
  if (env['DATA_DIR']) result['dataDir'] = env['DATA_DIR'];
  if (env['DATABASE_URL']) result['databaseUrl'] = env['DATABASE_URL'];
  if (env['REDIS_URL']) result['redisUrl'] = env['REDIS_URL'];
  if (env['REDIS_PREFIX']) result['redisPrefix'] = env['REDIS_PREFIX'];
  if (env['LOG_LEVEL']) result['logLevel'] = env['LOG_LEVEL'];
  if (env['LIMITS_BACKEND']) result['limitsBackend'] = env['LIMITS_BACKEND'];
  if (env['REQUEST_VALIDATION']) result['requestValidation'] = env['REQUEST_VALIDATION'];
  if (env['SWITCHYARD_OPERATOR']) result['operator'] = env['SWITCHYARD_OPERATOR'];
  if (env['FILES_STORE']) result['filesStore'] = env['FILES_STORE'];
  if (env['INSTANCE_ID']) result['instanceId'] = env['INSTANCE_ID'];
  const batches: Record<string, unknown> = {};
  for (const [name, field] of [
    ['BATCH_LEASE_MS', 'leaseMs'],
    ['BATCH_CONCURRENCY', 'concurrency'],
    ['BATCH_CHUNK_SIZE', 'chunkSize'],
    ['BATCH_INTERACTIVE_THRESHOLD', 'interactiveThreshold'],
  ] as const) {
    const value = integerFromEnv(env, name);
    if (value !== undefined) batches[field] = value;
  }
  if (Object.keys(batches).length > 0) result['batches'] = batches;
  const dependencies: Record<string, unknown> = {};
  for (const [name, field] of [
    ['REDIS_COMMAND_TIMEOUT_MS', 'redisCommandTimeoutMs'],
    ['REDIS_CONNECT_TIMEOUT_MS', 'redisConnectTimeoutMs'],
    ['DATABASE_CONNECT_TIMEOUT_MS', 'databaseConnectTimeoutMs'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', 'databaseStatementTimeoutMs'],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 'databaseIdleInTransactionTimeoutMs'],
    ['S3_CONNECT_TIMEOUT_MS', 'objectStoreConnectTimeoutMs'],
    ['S3_REQUEST_TIMEOUT_MS', 'objectStoreRequestTimeoutMs'],
    ['CACHED_KEYS_MAX_STALENESS_MS', 'cachedKeysMaxStalenessMs'],
    ['LEDGER_MEMORY_RECORDS', 'ledgerMemoryRecords'],
  ] as const) {
    const value = integerFromEnv(env, name);
    if (value !== undefined) dependencies[field] = value;
  }
  if (Object.keys(dependencies).length > 0) result['dependencies'] = dependencies;
  if (env['LIMITS_ON_STORE_FAILURE']) result['limits'] = { onStoreFailure: env['LIMITS_ON_STORE_FAILURE'] };
  if (env['ROUTING_ON_STORE_FAILURE']) result['routingState'] = { onStoreFailure: env['ROUTING_ON_STORE_FAILURE'] };
  try {
    const tracing = tracingFromEnvironment(env);
    if (tracing !== undefined) result['tracing'] = tracing;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  if (env['SMTP_URL'] || env['SMTP_FROM'])
    result['smtp'] = { ...(env['SMTP_URL'] ? { url: env['SMTP_URL'] } : {}), ...(env['SMTP_FROM'] ? { from: env['SMTP_FROM'] } : {}) };
  return result;
}

/** S3 bucket naming rules: 3-63 lower-case letters, digits, dots and dashes, starting and ending alphanumeric. */
const S3_BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `local`, `postgres` or `s3://bucket[/prefix]`, checked against the database and the AWS variables. */
function resolveFilesStore(setting: string, dataDir: string, databaseUrl: string, env: NodeJS.ProcessEnv): FilesStoreConfig {
  const usage = 'Use filesStore (FILES_STORE) local, postgres or s3://bucket[/prefix].';
  if (setting === 'local') return { kind: 'local', directory: resolve(dataDir, 'files') };
  if (setting === 'postgres') {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new ConfigError(
        'filesStore (FILES_STORE) is "postgres" but the database is SQLite. Set DATABASE_URL=postgres://... or use FILES_STORE=local.',
      );
    }
    return { kind: 'postgres', databaseUrl };
  }
  if (!setting.startsWith('s3://')) throw new ConfigError(`filesStore (FILES_STORE) "${setting}" is not supported. ${usage}`);
  const [bucket = '', ...rest] = setting.slice('s3://'.length).split('/');
  if (!S3_BUCKET_NAME.test(bucket)) {
    throw new ConfigError(
      `filesStore (FILES_STORE) "${setting}": "${bucket}" is not a valid S3 bucket name (3-63 lower-case letters, digits, dots and dashes). ${usage}`,
    );
  }
  const prefix = rest.filter((segment) => segment !== '').join('/');
  const endpoint = env['AWS_ENDPOINT_URL_S3'] || env['AWS_ENDPOINT_URL'] || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint)) {
    throw new ConfigError(`AWS_ENDPOINT_URL "${endpoint}" must be an http:// or https:// URL, e.g. http://127.0.0.1:9000.`);
  }
  const accessKeyId = env['AWS_ACCESS_KEY_ID'] || undefined;
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'] || undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError("Set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or neither, to use the AWS SDK's own credential chain).");
  }
  const sessionToken = env['AWS_SESSION_TOKEN'] || undefined;
  return {
    kind: 's3',
    bucket,
    prefix,
    endpoint,
    region: env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || 'us-east-1',
    credentials:
      accessKeyId === undefined || secretAccessKey === undefined
        ? undefined
        : { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sections the environment sets field by field: a file's other fields of the same section stay. */
const MERGED_SECTIONS = new Set(['server', 'batches', 'limits', 'routingState', 'dependencies', 'tracing']);

/** Later layers win; the sections above merge key by key, everything else is replaced. */
function mergeLayers(...layers: unknown[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    if (!isPlainObject(layer)) continue;
    for (const [key, value] of Object.entries(layer)) {
      const existing = merged[key];
      merged[key] = isPlainObject(existing) && isPlainObject(value) && MERGED_SECTIONS.has(key) ? { ...existing, ...value } : value;
    }
  }
  return merged;
}

function describeIssuePath(path: ReadonlyArray<PropertyKey>): string {
  return (
    path.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`)).join('') ||
    '(root)'
  );
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

function crossCheck(
  config: z.infer<typeof configSchema>,
  tiers: Record<string, TierConfig>,
  providers: Record<string, ResolvedProviderConfig>,
  models: ModelConfig[],
): void {
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

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
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

  const providers: Record<string, ResolvedProviderConfig> = {};
  for (const [id, provider] of Object.entries(config.providers)) {
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
    return { ...model, provider, created: model.created ?? stableCreatedSeconds(model.id) };
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
    retiredTiers: config.retiredTiers,
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
