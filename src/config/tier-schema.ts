/**
 * Tiers (the plans keys and organizations run under): their schema, the default tiers, and the schema of
 * a tier as the config file gives it. Part of the configuration's shape (schema.ts re-exports them).
 */
import { z } from 'zod';
import { budgetSchema } from './budget-config.ts';

/** Every permission a key can carry; each endpoint family requires one. */
export const PERMISSIONS = [
  'chat.completions',
  'messages',
  'responses',
  'embeddings',
  'moderations',
  'images',
  'files',
  'batches',
  'models',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const nonNegativeInteger = z.number().int().nonnegative();

export const tierSchema = z.strictObject({
  /** Requests per minute per key; 0 means unlimited. */
  requestsPerMinute: nonNegativeInteger,
  /** Tokens (input + output) per minute per key; 0 means unlimited. */
  tokensPerMinute: nonNegativeInteger,
  /** Tokens per UTC day per organization; 0 means unlimited. */
  tokensPerDay: nonNegativeInteger,
  /** Tokens per calendar month (UTC) per organization; 0 means unlimited. */
  tokensPerMonth: nonNegativeInteger,
  /** Batches validating or in progress at once; 0 means the batch API is not available. */
  concurrentBatches: nonNegativeInteger,
  /** Most requests (lines) in one batch (SPEC: above 50,000 needs a custom plan: a per-organization override). */
  maxRequestsPerBatch: z.number().int().positive().default(50_000),
  /** Permissions given to new keys of this tier when none are named. */
  permissions: z.array(z.enum(PERMISSIONS)),
  /** Run the moderation pre-check on generation inputs for keys of this tier. */
  moderateInputs: z.boolean().default(false),
  /** Active (not revoked, not expired) API keys per organization; 0 means unlimited. */
  maxActiveKeys: nonNegativeInteger.default(0),
  /** Bytes of stored files per organization (uploads refused past it; server output counted); 0 means unlimited. */
  storageQuotaBytes: nonNegativeInteger.default(0),
  /** Requests per minute summed over all the organization's keys; 0 means unlimited (services/budgets/README.md). */
  organizationRequestsPerMinute: nonNegativeInteger.default(0),
  /** Tokens per minute summed over all the organization's keys; 0 means unlimited. */
  organizationTokensPerMinute: nonNegativeInteger.default(0),
  /** The organization's money budget on this plan (operators override it per organization); null: none. */
  budget: budgetSchema.nullable().default(null),
});
export type TierConfig = z.infer<typeof tierSchema>;

/**
 * A tier as the config file gives it: every field optional and none defaulted, so that a partial
 * override of a default tier (`Free: { requestsPerMinute: 5 }`) keeps that tier's other figures
 * (config/tiers.ts `mergeTiers` fills them, then applies `tierSchema`'s defaults to new tiers only).
 * zod's `partial()` would keep the defaults and put `maxActiveKeys: 0` over Free's 10.
 */
export const tierOverrideSchema = z.strictObject(
  Object.fromEntries(
    Object.entries(tierSchema.shape).map(([field, schema]) => [
      field,
      (schema instanceof z.ZodDefault ? schema.unwrap() : schema).optional(),
    ]),
  ) as unknown as { [Field in keyof typeof tierSchema.shape]: z.ZodOptional<z.ZodType<TierConfig[Field]>> },
);

const ALL_PERMISSIONS = [...PERMISSIONS];
const MEBIBYTE = 1024 * 1024;
const GIBIBYTE = 1024 * MEBIBYTE;

export const DEFAULT_TIERS: Record<string, z.input<typeof tierSchema>> = {
  Free: {
    requestsPerMinute: 20,
    tokensPerMinute: 10_000,
    tokensPerDay: 10_000,
    tokensPerMonth: 10_000,
    concurrentBatches: 0,
    maxActiveKeys: 10,
    storageQuotaBytes: 100 * MEBIBYTE,
    permissions: ['chat.completions', 'messages', 'responses', 'embeddings', 'moderations', 'images', 'files', 'models'],
    // A Free organization's keys share its per-minute limits: more keys do not mean more throughput.
    organizationRequestsPerMinute: 20,
    organizationTokensPerMinute: 10_000,
  },
  Developer: {
    requestsPerMinute: 600,
    tokensPerMinute: 200_000,
    tokensPerDay: 2_000_000,
    tokensPerMonth: 20_000_000,
    concurrentBatches: 5,
    maxActiveKeys: 100,
    storageQuotaBytes: 10 * GIBIBYTE,
    permissions: ALL_PERMISSIONS,
  },
  Production: {
    requestsPerMinute: 6_000,
    tokensPerMinute: 2_000_000,
    tokensPerDay: 50_000_000,
    tokensPerMonth: 1_000_000_000,
    concurrentBatches: 10,
    maxActiveKeys: 1_000,
    storageQuotaBytes: 100 * GIBIBYTE,
    permissions: ALL_PERMISSIONS,
  },
  Enterprise: {
    requestsPerMinute: 0,
    tokensPerMinute: 0,
    tokensPerDay: 0,
    tokensPerMonth: 0,
    concurrentBatches: 100,
    permissions: ALL_PERMISSIONS,
  },
};
