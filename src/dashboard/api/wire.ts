/**
 * The JSON shapes the dashboard API answers with (snake_case, as on the wire). The server's handlers are
 * typed with them, and the browser pages read them through JSDoc (`pages/types.js`), so a renamed field
 * fails `npm run typecheck` on both sides. Types only: nothing here runs.
 */

/**
 * The wire Batch object (batches/batch-object.ts) as the pages read it; kept here so the browser's type
 * check needs no server module. The server's handlers return the real one through this type, so the two
 * cannot drift apart unnoticed.
 */
export interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: { code: string; message: string; param?: string | null; line?: number | null }[] } | null;
  input_file_id: string;
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Unix seconds. */
  created_at: number;
  request_counts: { total: number; completed: number; failed: number };
}

/** The wire File object (services/files/file-object.ts) as the pages read it; checked the same way. */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  filename: string;
  purpose: string;
  /** Unix seconds, or null when the file does not expire. */
  expires_at: number | null;
}

export interface ListOf<T> {
  object: 'list';
  data: T[];
}

/** A page of a long list: `next` is the cursor for `?after=` (null on the last page). */
export interface PageOf<T> extends ListOf<T> {
  has_more: boolean;
  next: string | null;
}

export interface SessionObject {
  object: 'dashboard.session';
  id: string;
  email: string;
  role: 'owner' | 'member' | 'operator';
  organization: string;
  totp_enabled: boolean;
  csrf_token: string;
  idle_expires_at: number;
  absolute_expires_at: number;
}

export type KeyStatus = 'active' | 'expired' | 'revoked';

export interface KeyObject {
  id: string;
  name: string | null;
  prefix: string;
  tier: string;
  permissions: string[];
  created_at: number;
  last_used_day: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  status: KeyStatus;
}

export interface CreatedKeyObject extends KeyObject {
  /** The secret, shown once. */
  key: string;
  previous?: KeyObject;
}

export interface KeysList extends ListOf<KeyObject> {
  allowed_tiers: { name: string; permissions: string[] }[];
  plan_permissions: string[];
  permissions: string[];
}

export interface UsageRow {
  date: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
}

export interface UsageTotals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface LimitInfo {
  used: number;
  limit: number;
  remaining: number;
  reset_at: string;
}

export interface UsageReport {
  object: 'dashboard.usage';
  organization: string;
  from: string;
  to: string;
  data: UsageRow[];
  totals: UsageTotals;
  limits: { tier: string; daily: LimitInfo; monthly: LimitInfo };
}

export interface AuditEntryObject {
  id: number;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  created_at: number;
  count: number;
}

export interface ModelObject {
  id: string;
  aliases: string[];
  description: string | null | undefined;
  capabilities: string[];
  context_window: number;
  max_output_tokens: number;
  pricing: { input_per_million: number; output_per_million: number };
}
