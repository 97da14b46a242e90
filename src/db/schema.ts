/**
 * Table types for Kysely. Timestamps are integer milliseconds since the Unix epoch (BIGINT on
 * Postgres, parsed to number by database.ts); booleans are integers 0/1 so both dialects agree;
 * JSON columns are text.
 */
import type { Generated } from 'kysely';
import type { AlertsSchema } from './alerts-schema.ts';
import type { SsoSchema } from './sso-schema.ts';
import type { InvitationsSchema } from './invitations-schema.ts';
import type { StorageSchema } from './storage-schema.ts';
import type { BudgetsSchema } from './budgets-schema.ts';

export interface OrganizationsTable {
  id: string;
  name: string;
  /** Milliseconds since epoch. */
  created_at: number;
  /** JSON array of tier names the organization's owners may give new keys; null: the default tier only (superseded by `plan`, migration 0100). */
  allowed_tiers: string | null;
  /** The configured tier this organization's plan starts from (migration 0100); null until set (filled at start). */
  plan: string | null;
  /** JSON object of per-organization overrides of the plan's figures (accounts/plans.ts `PlanOverrides`), or null. */
  plan_overrides: string | null;
  /** `active`, `suspended`, or `system` for the operators' reserved organization. */
  status: Generated<string>;
  /** Milliseconds since epoch of the suspension, or null. */
  suspended_at: number | null;
  /** The deployment that answered (migration 0050); null for older rows and requests no deployment answered. */
  deployment: string | null;
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
  /** Cost in integer micro-USD (migration 0180; what budgets count). */
  cost_micro_usd: number;
  /** 1 for batch requests (priced at 50%). */
  batch: number;
  status_code: number;
  /** Milliseconds from request start to the end of the answer. */
  latency_ms: number;
  /** Milliseconds since epoch. */
  created_at: number;
  /** The deployment that answered (migration 0050); null for older rows and requests no deployment answered. */
  deployment: string | null;
  /** 1 when the response cache answered (migration 0210). */
  cache_hit: Generated<number>;
  /** Tokens the cached answer's upstream call used, not spent again (migration 0210). */
  cache_saved_tokens: Generated<number>;
  /** What the upstream call would have cost less what the hit was charged, integer micro-USD (migration 0210). */
  cache_saved_micro_usd: Generated<number>;
}

/** Stored files (SPEC "File"); the bytes live in the blob store under `id`. */
export interface FilesTable {
  /** `file-...`. */
  id: string;
  organization_id: string;
  /** `batch`, `batch_output`, `user_data`, `vision`, `assistants`, `image_output`. */
  purpose: string;
  filename: string;
  /** Size of the content, bytes. */
  bytes: number;
  /** Content type the content is served with. */
  media_type: string;
  /** Milliseconds since epoch. */
  created_at: number;
  /** Milliseconds since epoch after which the file answers 410, or null for never. */
  expires_at: number | null;
  /** Milliseconds since epoch when the owner deleted it, or null. */
  deleted_at: number | null;
  /** Milliseconds since epoch when the bytes were removed from the blob store, or null. */
  purged_at: number | null;
}

/** Server-wide values every instance shares (e.g. the file-URL signing secret). */
export interface SettingsTable {
  name: string;
  value: string;
}

/** Batches (SPEC "Batch"), with the lease that lets exactly one instance work on each. */
export interface BatchesTable {
  /** `batch-...`. */
  id: string;
  organization_id: string;
  /** The key that created the batch; its lines run on its behalf (limits, permissions, metering). */
  key_id: string;
  /** `/v1/chat/completions`, `/v1/embeddings` or `/v1/responses`. */
  endpoint: string;
  input_file_id: string;
  /** Always `24h`. */
  completion_window: string;
  /** validating | in_progress | finalizing | completed | failed | canceled | expired. */
  status: string;
  /** JSON object of string pairs, or null. */
  metadata: string | null;
  /** JSON array of `{code, message, line, param}`, or null. */
  errors: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Request counts (lines). */
  total: number;
  completed: number;
  failed: number;
  /** Milliseconds since epoch (this and every other `*_at`). */
  created_at: number;
  expires_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  /** 1 once the output and error files are written (or there is nothing to write). */
  results_written: number;
  /** Worker id holding the lease, or null. */
  lease_owner: string | null;
  /** Milliseconds since epoch when the lease lapses, or null. */
  lease_expires_at: number | null;
  /** Failures in a row of the current batch-level step (validate, finalize) for a reason that may heal. */
  step_attempts: Generated<number>;
  /** Milliseconds since epoch before which no instance claims the batch again (backoff), or null. */
  retry_at: number | null;
}

/** One row per input line of a batch: the request, then its outcome. */
export interface BatchRequestsTable {
  batch_id: string;
  /** 1-based line number in the input file. */
  line: number;
  custom_id: string;
  /** JSON text of the line's `body`. */
  body: string;
  /** pending | completed | failed. */
  state: string;
  /** Attempts made so far (429 answers are retried). */
  attempts: number;
  /** Milliseconds since epoch before which the line is not retried. */
  next_attempt_at: number;
  /** `batch_req_...` id of the output or error line, once finished. */
  result_id: string | null;
  /** HTTP status of the in-process call, or null when it never ran. */
  status_code: number | null;
  /** `x-request-id` of the in-process call. */
  request_id: string | null;
  /** Response body text as the route answered it. */
  response_body: string | null;
  error_code: string | null;
  error_message: string | null;
  /** Milliseconds since epoch. */
  finished_at: number | null;
  /** Worker id that claimed the line (with its chunk), or null. */
  lease_owner: string | null;
  /** Milliseconds since epoch when the line's claim lapses, or null. */
  lease_expires_at: number | null;
}

/** One stored response-style response (`store: true`), with this turn's input items. */
export interface StoredResponsesTable {
  /** `resp_` + 48 hex. */
  id: string;
  organization_id: string;
  /** The response this one continued, or null for the first turn of a conversation. */
  previous_response_id: string | null;
  model: string;
  /** Response status (`completed`, `incomplete`, `failed`). */
  status: string;
  /** JSON of the request's `instructions` (string or message array), or null. */
  instructions: string | null;
  /** JSON of the whole Response object (without `_metadata`). */
  response: string;
  /** JSON array of this turn's input items, each with an id. */
  input_items: string;
  /** Milliseconds since epoch. */
  created_at: number;
  /** The deployment that answered (migration 0050); null for older rows and requests no deployment answered. */
  deployment: string | null;
}

/** People who sign in to the dashboard: `owner` (manages keys) or `member` (reads only). */
export interface OwnersTable {
  /** `own_...`. */
  id: string;
  organization_id: string;
  /** Lower-case; unique across the server (one sign-in name, one organization). */
  email: string;
  role: string;
  /** scrypt hash (`scrypt$N$r$p$salt$hash`), or null until the set-password link is used. */
  password_hash: string | null;
  /** Base32 TOTP secret once the second factor is enabled, else null. */
  totp_secret: string | null;
  created_at: number;
  /** The last accepted TOTP time step (Unix time / 30 s); a code of this step or an earlier one is refused (migration 0080). */
  totp_last_step: number | null;
  /** The secret the server generated at enrolment, until a code confirms it (then it moves to `totp_secret`). */
  totp_pending_secret: string | null;
}

/** One-time recovery codes of an owner's second factor; only the SHA-256 of each code is stored (migration 0080). */
export interface OwnerRecoveryCodesTable {
  owner_id: string;
  code_hash: string;
  created_at: number;
  /** When the code was used (it works once), else null. */
  used_at: number | null;
}

/** One-time set-password links; only the SHA-256 of the token is stored. */
export interface OwnerLinksTable {
  token_hash: string;
  owner_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** Server-side dashboard sessions; the cookie carries a secret whose SHA-256 is `token_hash`. */
export interface DashboardSessionsTable {
  /** Public id (`ses_...`), safe to list and log. */
  id: string;
  token_hash: string;
  owner_id: string;
  organization_id: string;
  user_agent: string | null;
  address: string | null;
  created_at: number;
  last_seen_at: number;
  /** last_seen_at plus the idle timeout, moved forward as the session is used. */
  idle_expires_at: number;
  /** Fixed at sign-in. */
  absolute_expires_at: number;
  revoked_at: number | null;
}

/**
 * Sign-in attempts per subject (`account:<email>`, `address:<ip>`, a known device `device:<owner id> <ip>`
 * or `session:<id>`, a signed-in re-check `reauth:<owner id>`), for throttling on every instance. A row
 * is written (as a failure) before the password is checked, and turned into a success afterwards.
 */
export interface SignInAttemptsTable {
  id: Generated<number>;
  subject: string;
  /** 1 for a successful sign-in; 0 for a failure or an attempt still being checked. */
  succeeded: number;
  created_at: number;
}

export interface AuditLogTable {
  id: Generated<number>;
  organization_id: string;
  /** Who: an owner's email, or `operator` for the CLI. */
  actor: string;
  /** `key.created`, `key.revoked`, `key.rotated`, `sign_in.succeeded`, `sign_in.failed`, ... */
  action: string;
  /** What it was done to (a key id), or null. */
  target: string | null;
  address: string | null;
  /** Milliseconds since epoch: the first occurrence for an aggregated row. */
  created_at: number;
  /** How many times it happened: failed sign-ins are one row per account and throttle window (migration 0080). */
  occurrences: Generated<number>;
  /**
   * An aggregated row's window start (milliseconds since epoch), unique with organization, actor and
   * action (migration 0130: racing instances upsert one row); null for every other row.
   */
  window_start: number | null;
}

/** Usage per organization, UTC day, model and key, maintained in the same transaction as the ledger. */
export interface UsageDailyTable {
  organization_id: string;
  /** 00:00 UTC of the day, milliseconds since epoch. */
  day_start: number;
  model: string;
  key_id: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
}

/** Output item id -> the stored response holding it (migration 0040), for `item_reference` lookups. */
export interface StoredResponseItemsTable {
  organization_id: string;
  /** `msg_...`, `fc_...`, `rs_...`. */
  item_id: string;
  response_id: string;
}

/** What operators did (migration 0100), kept apart from the organizations' own audit logs. */
export interface OperatorAuditTable {
  id: Generated<number>;
  /** The operator's email, or `cli` for the admin commands. */
  actor: string;
  /** `organization.plan_changed`, `organization.suspended`, `key.updated`, `owner.removed`, ... */
  action: string;
  /** The organization acted on, or null. */
  organization_id: string | null;
  /** What inside it (a key id, an email), or null. */
  target: string | null;
  /** JSON of what changed, or null. */
  detail: string | null;
  address: string | null;
  created_at: number;
}

/**
 * One row per running instance, renewed by its heartbeat every few seconds: the operator's fleet page
 * and config agreement (migration 0100; 0131 merged 0120's `instance_configs` in). An instance silent
 * for 3 heartbeats counts as gone; one that stops cleanly deletes its row.
 */
export interface InstancesTable {
  /** The instance id of batch leases. */
  id: string;
  /** package.json version. */
  version: string;
  /** Milliseconds since epoch. */
  started_at: number;
  last_seen_at: number;
  /** sha256 hex of the effective config that callers see (config/config-hash.ts); null from an older version. */
  config_hash: string | null;
}

/**
 * Every table; budget alerts' tables are declared in alerts-schema.ts, budgets' in budgets-schema.ts,
 * the storage quota's in storage-schema.ts, single sign-on's in sso-schema.ts, invitations' in
 * invitations-schema.ts.
 */
export interface DatabaseSchema extends AlertsSchema, BudgetsSchema, StorageSchema, SsoSchema, InvitationsSchema {
  operator_audit: OperatorAuditTable;
  instances: InstancesTable;
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  counters: CountersTable;
  usage_ledger: UsageLedgerTable;
  stored_responses: StoredResponsesTable;
  stored_response_items: StoredResponseItemsTable;
  files: FilesTable;
  settings: SettingsTable;
  batches: BatchesTable;
  batch_requests: BatchRequestsTable;
  owners: OwnersTable;
  owner_links: OwnerLinksTable;
  owner_recovery_codes: OwnerRecoveryCodesTable;
  dashboard_sessions: DashboardSessionsTable;
  sign_in_attempts: SignInAttemptsTable;
  audit_log: AuditLogTable;
  usage_daily: UsageDailyTable;
}
