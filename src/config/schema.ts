/**
 * The shape of Switchyard's configuration, validated with zod. Every field has a default so that an
 * empty config (fresh install) gives a working service with the built-in engines.
 */
import { z } from 'zod';
import type { PriceCard } from '../core/price-card.ts';
import { pricingSchema } from './pricing-schema.ts';
import { alertsSchema } from './alerts-config.ts';
import { responseCacheSchema } from './response-cache-config.ts';

export { BUDGET_PERIODS, type BudgetPeriod } from './budget-config.ts';
import { serverSchema } from './server-schema.ts';
import { ssoSchema } from './sso-config.ts';
import { tracingSchema } from './tracing-config.ts';
import { tierOverrideSchema } from './tier-schema.ts';

export { DEFAULT_TIERS, PERMISSIONS, tierSchema, type Permission, type TierConfig } from './tier-schema.ts';

/** Capabilities a model may declare; the catalogue lists them. */
export const CAPABILITIES = [
  'chat',
  'vision',
  'function_calling',
  'json_mode',
  'streaming',
  'thinking',
  'embeddings',
  'moderation',
  'image_generation',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

const nonNegativeInteger = z.number().int().nonnegative();

const secretSchema = z.union([
  z.string(),
  /** Read the secret from this environment variable at start-up. */
  z.strictObject({ env: z.string().min(1) }),
]);

/** An upstream key: a secret, or `{ file }`, read at start and re-read when the file changes (secret-file.ts). */
const upstreamKeySchema = z.union([secretSchema, z.strictObject({ file: z.string().min(1) })]);

const providerBase = {
  /** How long one upstream attempt may take, milliseconds. */
  timeoutMs: z.number().int().positive().default(120_000),
  /** Retries after the first attempt on connection errors, 429 and 5xx. */
  maxRetries: z.number().int().nonnegative().default(2),
  /** Extra headers sent upstream. */
  headers: z.record(z.string(), z.string()).default({}),
  /**
   * How long a deployment on this provider is skipped after it failed before its first byte
   * (connection error, 5xx, 429) when the upstream named no `retry-after`, milliseconds. Default 5,000.
   */
  cooldownMs: z.number().int().nonnegative().optional(),
};

/**
 * More upstream keys of the same account kind. Each key is a deployment of its own for every model on
 * this provider (its own cooldown and per-deployment limits; the deployment's weight is split evenly).
 */
const apiKeysSchema = z.array(upstreamKeySchema).min(1).optional();

export const providerSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('openai-compatible'),
    /** Base URL including the version prefix, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
    baseUrl: z.url(),
    apiKey: upstreamKeySchema.optional(),
    apiKeys: apiKeysSchema,
    /**
     * `openai`: OpenAI's own API (`max_completion_tokens`, no `top_k`); `generic`: compatible servers
     * (vLLM, Ollama, llama.cpp server: `max_tokens`, `top_k` accepted). Default: `openai` when the
     * base URL's host is api.openai.com, else `generic`.
     */
    dialect: z.enum(['openai', 'generic']).optional(),
    /**
     * Download image `url` results from any address. Default false: only public addresses (no
     * loopback, private, link-local, CGNAT or metadata ranges), for a backend whose images are served
     * from a private network.
     */
    allowPrivateImageUrls: z.boolean().optional(),
    ...providerBase,
  }),
  z.strictObject({
    kind: z.literal('anthropic'),
    /** Base URL without `/v1`, e.g. `https://api.anthropic.com`. */
    baseUrl: z.url().default('https://api.anthropic.com'),
    apiKey: upstreamKeySchema.optional(),
    apiKeys: apiKeysSchema,
    anthropicVersion: z.string().default('2023-06-01'),
    ...providerBase,
  }),
  z.strictObject({
    kind: z.literal('llama-cpp'),
    /**
     * CPU threads; defaults to the machine's core count, which is right on a machine that runs little
     * else. Where other work competes for the cores, set fewer: llama.cpp's threads wait for each
     * other, and a busy core stalls them all.
     */
    threads: z.number().int().positive().optional(),
    /** Generations one model runs at once (one context sequence each); more wait in a queue. */
    sequencesPerModel: z.number().int().positive().default(4),
    /** Upper bound of one sequence's context (prompt + completion), tokens. */
    maxContextTokens: z.number().int().positive().default(8192),
    ...providerBase,
  }),
  z.strictObject({
    kind: z.literal('builtin'),
    ...providerBase,
  }),
]);
export type ProviderConfig = z.infer<typeof providerSchema>;

/** How a model with several deployments picks one per request (services/generation/routing). */
export const ROUTING_STRATEGIES = ['weighted', 'least-busy', 'latency', 'usage'] as const;
export type RoutingStrategyName = (typeof ROUTING_STRATEGIES)[number];

/** One backend serving a model: a provider (and through it, its keys) plus what the upstream allows. */
export const deploymentSchema = z.strictObject({
  /** Id of an entry under `providers`. */
  provider: z.string().min(1),
  /** Model name sent to this deployment; defaults to the model's `upstreamModel`, then its `id`. */
  upstreamModel: z.string().min(1).optional(),
  /** Share of traffic under `routing: weighted` (relative to the other deployments). Default 1. */
  weight: z.number().positive().default(1),
  /** Requests per minute this upstream allows (never exceeded, across instances sharing Redis); 0 or absent: unlimited. */
  requestsPerMinute: nonNegativeInteger.optional(),
  /** Tokens per minute this upstream allows (prompt counted at the start, corrected by the real usage); 0 or absent: unlimited. */
  tokensPerMinute: nonNegativeInteger.optional(),
});
export type DeploymentConfig = z.infer<typeof deploymentSchema>;

export const modelSchema = z.strictObject({
  /** Public model id (what clients send). */
  id: z.string().min(1),
  /**
   * Id of an entry under `providers`: the model's one deployment. With `deployments` it may be left
   * out; it then names the first deployment's provider (embeddings, moderation and images use it).
   */
  provider: z.string().min(1).optional(),
  /** Several backends for this model (instead of `provider` alone); see README "Routing". */
  deployments: z.array(deploymentSchema).min(1).optional(),
  /** How a request picks one of `deployments`; default `weighted`. */
  routing: z.enum(ROUTING_STRATEGIES).optional(),
  /** Model name sent upstream (defaults to `id`); for llama-cpp, the GGUF file path; for builtin, the engine name. */
  upstreamModel: z.string().min(1).optional(),
  aliases: z.array(z.string().min(1)).default([]),
  capabilities: z.array(z.enum(CAPABILITIES)).min(1),
  description: z.string().default(''),
  ownedBy: z.string().optional(),
  /** Unix seconds shown as `created` in the catalogue. */
  created: z.number().int().nonnegative().optional(),
  /** Context window in tokens (prompt + completion). */
  contextWindow: z.number().int().positive().default(8192),
  /** Largest completion the model may produce, tokens. */
  maxOutputTokens: z.number().int().positive().default(4096),
  /** The price card (README "Prices"): prices, or `from: genai-prices` with overrides; resolved at load (resolve-pricing.ts). */
  pricing: pricingSchema,
  /** Ordered model ids tried when this one fails before any byte reached the client. */
  fallbacks: z.array(z.string().min(1)).default([]),
  /** Image sizes (`WxH`) an image model accepts. */
  imageSizes: z.array(z.string().regex(/^\d+x\d+$/)).optional(),
  /** Embedding vector length, for embedding models. */
  dimensions: z.number().int().positive().optional(),
  /** Run the moderation pre-check on generation inputs sent to this model, whatever the caller's tier. */
  moderateInputs: z.boolean().optional(),
});
/**
 * A catalogue model as the rest of the code sees it: `provider` is always set (config loading fills it
 * from `deployments`) and `pricing` is the resolved price card.
 */
export type ModelConfig = Omit<z.infer<typeof modelSchema>, 'provider' | 'pricing'> & { provider: string; pricing: PriceCard };

export const configSchema = z.strictObject({
  /** Operator name: `_metadata.creator` and the default organization `org-<operator>-ai`. */
  operator: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'use lower-case letters, digits and dashes, e.g. "switchyard"')
    .default('switchyard'),
  server: serverSchema,
  /** Directory for the SQLite database and stored files. */
  dataDir: z.string().default('./data'),
  /** `sqlite:<path>` (default: `<dataDir>/switchyard.db`) or `postgres://...`. */
  databaseUrl: z.string().optional(),
  /** `redis://...`; when set, rate limits and caches are shared by every instance. */
  redisUrl: z.string().optional(),
  /**
   * Start of every Redis key this deployment writes (limits, routing state): give each deployment
   * sharing one Redis (staging, production) its own. Env REDIS_PREFIX.
   */
  redisPrefix: z
    .string()
    .regex(/^[A-Za-z0-9:._-]{1,64}$/, 'use letters, digits, ":", ".", "_" and "-" (at most 64), e.g. "staging:"')
    .default('switchyard:'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Where rate limits and quotas are counted: `auto` (Redis when `redisUrl` is set, else in-process),
   * `memory`, `redis`, or `off` (nothing enforced; the usage ledger still records cost).
   */
  limitsBackend: z.enum(['auto', 'memory', 'redis', 'off']).default('auto'),
  /**
   * Where file bytes live: `local` (`<dataDir>/files`), `postgres` (chunks in the database named by
   * `databaseUrl`, which must then be Postgres) or `s3://bucket[/prefix]` (any S3-compatible store,
   * configured by AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
   */
  filesStore: z.string().min(1).default('local'),
  /**
   * `spec` (default): every SPEC request rule as written. `compatible`: accept what the upstream APIs
   * accept where the SPEC is stricter (README "Request validation" lists each relaxation).
   */
  requestValidation: z.enum(['spec', 'compatible']).default('spec'),
  /** Create and print one key on the first start of an empty database. */
  bootstrapKey: z.boolean().default(true),
  /**
   * Tiers by name, merged with the default tiers field by field: `Developer: { requestsPerMinute: 5 }`
   * changes one field and keeps the other tiers; a new tier names every field; `null` removes a tier.
   */
  tiers: z.record(z.string().min(1), tierOverrideSchema.nullable()).default({}),
  /**
   * Tiers no longer under `tiers` whose existing keys take another tier's limits and permissions, e.g.
   * `{ Production: Developer }`. Without it, a start finding keys of a tier the config lacks refuses to run.
   */
  retiredTiers: z.record(z.string().min(1), z.string().min(1)).default({}),
  /**
   * Mail that leaves (invitations, set-password links): an `smtp://` or `smtps://` URL for nodemailer
   * (SMTP_URL) and the sender (SMTP_FROM). Without a URL, links are written to the log instead.
   */
  smtp: z
    .strictObject({
      url: z
        .string()
        .regex(/^smtps?:\/\//, 'use smtp://user:password@host:port or smtps://...')
        .optional(),
      from: z.string().min(3).default('Switchyard <switchyard@localhost>'),
    })
    .prefault({}),
  /**
   * Invitations an organization's owners may send (INVITATIONS_PER_HOUR, INVITATIONS_PER_DAY): each
   * one is mail through the operator's SMTP, so they are bounded per organization, on every instance.
   */
  invitations: z
    .strictObject({
      perHour: z.number().int().min(1).default(20),
      perDay: z.number().int().min(1).default(100),
    })
    .prefault({}),
  /** Tier of the bootstrap key and of `keys create` without `--tier`. */
  defaultTier: z.string().default('Developer'),
  providers: z.record(z.string().min(1), providerSchema).default({}),
  models: z.array(modelSchema).default([]),
  /** Add the built-in engines (`builtin` provider and its models) to the catalogue. */
  builtinModels: z.boolean().default(true),
  /**
   * This instance's name in batch leases; keep it across restarts so a restarted instance frees what it
   * held and resumes at once. Unique per running instance. Default: kept in `<dataDir>/instance-id`.
   */
  instanceId: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'use letters, digits, ".", "_" and "-" (at most 64)')
    .optional(),
  /** What admission does while the shared limit store (Redis) cannot be reached (README "When a dependency fails"). */
  limits: z
    .strictObject({
      /** `local`: count in this instance's memory until Redis returns; `open`: admit uncounted; `closed`: refuse metered requests. */
      onStoreFailure: z.enum(['local', 'open', 'closed']).default('local'),
      /** Also refuse (500 service_unavailable) every request reserving against a money budget while Redis cannot be reached, whatever `onStoreFailure`. */
      refusePaidOnStoreFailure: z.boolean().default(false),
    })
    .prefault({}),
  /** What routing does while the shared deployment state (Redis) cannot be reached. */
  routingState: z
    .strictObject({
      /** `local`: route on this instance's own cooldowns and counts until Redis returns; `closed`: refuse routed requests. */
      onStoreFailure: z.enum(['local', 'closed']).default('local'),
    })
    .prefault({}),
  /** Bounds on every wait for a shared dependency (README "When a dependency fails"). */
  dependencies: z
    .strictObject({
      /** Longest wait for one Redis command, ms (on the hot path: admission, routing state). */
      redisCommandTimeoutMs: z.number().int().positive().default(1_000),
      /** Longest wait for a Redis connection, ms. */
      redisConnectTimeoutMs: z.number().int().positive().default(1_000),
      /** Longest wait for a Postgres connection (new or from the pool), ms. */
      databaseConnectTimeoutMs: z.number().int().positive().default(2_000),
      /** Request path (file metadata, keys, dashboard reads): longest wait for a pooled connection and for each Postgres statement, ms. */
      databaseRequestTimeoutMs: z.number().int().positive().default(2_000),
      /** Background work (ledger, rollups, retention, batch worker): longest Postgres statement, ms (server `statement_timeout`, and the client gives up 1 s later on a frozen server). */
      databaseStatementTimeoutMs: z.number().int().positive().default(15_000),
      /** Longest a Postgres session may sit idle inside a transaction, ms. */
      databaseIdleInTransactionTimeoutMs: z.number().int().positive().default(30_000),
      /** Longest wait for an object-store connection, ms. */
      objectStoreConnectTimeoutMs: z.number().int().positive().default(2_000),
      /** Longest silence on an object-store request, ms. */
      objectStoreRequestTimeoutMs: z.number().int().positive().default(15_000),
      /** How long API keys cached before the database became unreachable keep being accepted, ms. */
      cachedKeysMaxStalenessMs: z.number().int().nonnegative().default(300_000),
      /** Usage-ledger records kept in memory while the database is away; past that they go to the journal under the data directory. */
      ledgerMemoryRecords: z.number().int().positive().default(10_000),
    })
    .prefault({}),
  /** The batch worker of this instance. */
  batches: z
    .strictObject({
      /** How long a claim (batch step or line chunk) lasts without renewal, ms; renewed every third. A dead instance's work resumes elsewhere after this. */
      leaseMs: z.number().int().min(300).default(9_000),
      /** Batch lines this instance runs at once. */
      concurrency: z.number().int().positive().default(16),
      /** Lines claimed at once (one chunk). */
      chunkSize: z.number().int().positive().default(50),
      /** In-flight HTTP requests above which this instance runs (and claims) a quarter of `concurrency`. */
      interactiveThreshold: z.number().int().nonnegative().default(32),
    })
    .prefault({}),
  /** Traces over OTLP/HTTP (config/tracing-config.ts; the OTEL_* variables). Off without an endpoint. */
  tracing: tracingSchema.prefault({}),
  /** Budget alerts by email and signed webhooks (config/alerts-config.ts; the ALERT_* variables). */
  alerts: alertsSchema.prefault({}),
  /** OpenID Connect single sign-on for the dashboard (config/sso-config.ts). Off without providers. */
  sso: ssoSchema,
  /** The response cache (config/response-cache-config.ts; README "Response cache"). Off unless a plan or organization turns it on. */
  responseCache: responseCacheSchema,
});
export type ConfigInput = z.input<typeof configSchema>;

/**
 * One concrete backend of a model, as the router hands it to the provider registry: a provider, which
 * of its keys (0: `apiKey` or the first of `apiKeys`), and the model name sent upstream.
 */
export interface DeploymentTarget {
  provider: string;
  keyIndex: number;
  upstreamModel: string;
}
