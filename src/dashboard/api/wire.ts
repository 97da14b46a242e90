/**
 * The JSON shapes the dashboard API answers with (snake_case, as on the wire). The server's handlers are
 * typed with them, and the browser pages read them through JSDoc (`pages/types.js`), so a renamed field
 * fails `npm run typecheck` on both sides. Types only: nothing here runs.
 */
import type { PriceCardView } from '../../services/metering/price-card-view.ts';

export type { PriceCardView };

/**
 * The wire Batch object (formats/openai-batches/batch-object.ts) as the pages read it; kept here so the browser's type
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
  /** One batch's page only: those of its file ids that are deleted or expired (shown without a link). */
  unavailable_file_ids?: string[];
}

/** The wire File object (formats/openai-files/file-object.ts) as the pages read it; checked the same way. */
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
  /** The key that replaced this one by rotation (it keeps working until `expires_at`), or null. */
  replaced_by: string | null;
}

export interface CreatedKeyObject extends KeyObject {
  /** The secret, shown once. */
  key: string;
  previous?: KeyObject;
}

export interface KeysList extends PageOf<KeyObject> {
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

/** Usage of one model or one key over the range. */
export interface UsageSum {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface KeyUsage extends UsageSum {
  key_id: string;
  /** As the keys page names the key; null for usage without a key of this organization (e.g. a deleted one). */
  name: string | null;
  prefix: string | null;
  /** The key's own per-minute limits (its tier's, never above the plan's); 0: unlimited. */
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
}

/** The organization's plan figures (accounts/plans.ts); 0: unlimited. */
export interface PlanFigures {
  tier: string;
  custom: boolean;
  requests_per_minute: number;
  tokens_per_minute: number;
  tokens_per_day: number;
  tokens_per_month: number;
  concurrent_batches: number;
  max_requests_per_batch: number;
  /** Active API keys the organization may hold; 0: unlimited. */
  max_active_keys: number;
  /** Bytes of stored files the organization may hold; 0: unlimited. */
  storage_quota_bytes: number;
  permissions: string[];
}

/** An organization's keys and stored bytes against its plan (`GET /dashboard/api/limits`). */
export interface OrganizationLimits {
  object: 'organization.limits';
  organization: string;
  /** Active keys (not revoked, not expired) and the cap; limit 0: unlimited. */
  keys: { active: number; limit: number };
  /** Bytes stored, held by uploads in progress, and the quota (0: unlimited); null when the server keeps no quota. */
  storage: { used_bytes: number; reserved_bytes: number; limit_bytes: number } | null;
}

export interface UsageReport {
  object: 'dashboard.usage';
  organization: string;
  from: string;
  to: string;
  data: UsageRow[];
  totals: UsageTotals;
  by_model: (UsageSum & { model: string })[];
  by_key: KeyUsage[];
  limits: { tier: string; daily: LimitInfo; monthly: LimitInfo };
  /** The plan the limits come from; null when the organization has none yet (each key's tier stands for it). */
  plan: PlanFigures | null;
  /** The one rule of who is limited by what, as the service enforces it. */
  limits_rule: string;
}

export interface AuditEntryObject {
  id: number;
  actor: string;
  action: string;
  target: string | null;
  /** The target as the keys page names keys (`name (sk-sy-…abcd)` for each key id in it), or null. */
  target_label: string | null;
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
  /** The resolved price card (services/metering/price-card-view.ts). */
  pricing: PriceCardView;
}

/** A webhook endpoint of budget alerts (its secret is never shown again after creation). */
export interface WebhookEndpointObject {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  description: string | null;
  /** The event types it receives. */
  events: string[];
  /** The organization whose alerts it receives; null for an operator's (every organization's). */
  organization: string | null;
  created_by: string;
  /** Milliseconds since the epoch. */
  created_at: number;
}

export interface CreatedWebhookEndpointObject extends WebhookEndpointObject {
  /** The signing secret (`whsec_...`), shown once. */
  secret: string;
}

export interface WebhookEndpointsList extends ListOf<WebhookEndpointObject> {
  /** The event types an endpoint may take. */
  event_types: string[];
  /** Whether plain `http://` URLs are accepted (ALERT_WEBHOOKS_ALLOW_HTTP). */
  allow_http: boolean;
  /** Whether alert emails go out (SMTP configured and alert mail on). */
  mail_configured: boolean;
}

/** One message of the alerts' delivery log. */
export interface AlertDeliveryObject {
  /** `msg_...`, a webhook's `webhook-id`. */
  id: string;
  object: 'alert.delivery';
  event_type: string;
  /** The organization the event is about (null for an operator's test sample). */
  organization: string | null;
  kind: 'email' | 'webhook';
  endpoint_id: string | null;
  /** The email address or the endpoint's URL. */
  target: string;
  /** What it says, in a line: an email's subject, a webhook's event. */
  summary: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_error: string | null;
  /** HTTP status of the last webhook answer, or null. */
  last_status_code: number | null;
  /** Milliseconds since the epoch, as every time below; null when none. */
  last_attempt_at: number | null;
  /** When it is tried next (pending only). */
  next_attempt_at: number | null;
  created_at: number;
  finished_at: number | null;
}

/** One money budget in its current period (api/budgets.ts), integer micro-USD. */
export interface BudgetFiguresObject {
  period: 'day' | 'week' | 'month' | 'total';
  limit_micro_usd: number;
  /** Settled spend of the current period (the ledger's). */
  spent_micro_usd: number;
  /** The limit less the spend, never below 0. */
  remaining_micro_usd: number;
  /** When the period ends (ISO date-time); null for a `total` budget. */
  reset_at: string | null;
}

/** An organization's budget: from its plan, an operator's override, or none. */
export interface OrganizationBudgetObject extends Partial<BudgetFiguresObject> {
  object: 'organization.budget';
  organization: string;
  plan: string;
  source: 'plan' | 'override' | 'none';
  /** The plan's own budget (what applies when the override is cleared). */
  plan_budget: { period: string; limit_micro_usd: number } | null;
}

/** One key of the organization with its budget (null: only the organization's applies). */
export interface KeyBudgetObject {
  object: 'key.budget';
  key: string;
  name: string | null;
  prefix: string;
  status: 'active' | 'revoked' | 'expired';
  budget: BudgetFiguresObject | null;
}

/** `GET /dashboard/api/budgets`: the organization's budget and every key's. */
export interface BudgetsOverview {
  object: 'budgets';
  organization: OrganizationBudgetObject;
  keys: KeyBudgetObject[];
  periods: string[];
}
