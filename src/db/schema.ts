/**
 * Table types for Kysely. Timestamps are integer milliseconds since the Unix epoch (BIGINT on
 * Postgres, parsed to number by database.ts); booleans are integers 0/1 so both dialects agree;
 * JSON columns are text.
 */
import type { Generated } from 'kysely';

export interface OrganizationsTable {
  id: string;
  name: string;
  /** Milliseconds since epoch. */
  created_at: number;
}

export interface ApiKeysTable {
  /** Public key id (`key_...`), safe to show and log. */
  id: string;
  organization_id: string;
  /** SHA-256 hex of the secret key; the secret itself is never stored. */
  key_hash: string;
  /** First characters of the key and its last four, for listings (`sk-sy-AbC…wxyz`). */
  redacted: string;
  name: string | null;
  tier: string;
  /** JSON array of permission names. */
  permissions: string;
  /** Milliseconds since epoch. */
  created_at: number;
  /** Milliseconds since epoch, or null for no expiry. */
  expires_at: number | null;
  /** Milliseconds since epoch, or null while active. */
  revoked_at: number | null;
}

/** One row per counter; `keys_version` is bumped by every key write so caches can notice. */
export interface CountersTable {
  name: string;
  value: number;
}

export interface UsageLedgerTable {
  id: Generated<number>;
  request_id: string;
  organization_id: string;
  key_id: string;
  model: string;
  endpoint: string;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** Cost in US dollars. */
  cost_usd: number;
  /** 1 for batch requests (priced at 50%). */
  batch: number;
  status_code: number;
  /** Milliseconds from request start to the end of the answer. */
  latency_ms: number;
  /** Milliseconds since epoch. */
  created_at: number;
}

export interface DatabaseSchema {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  counters: CountersTable;
  usage_ledger: UsageLedgerTable;
}
