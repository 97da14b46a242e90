/**
 * Table types of budget alerts (migration 0190), kept apart from schema.ts, which extends them: the
 * alerts that fired, the webhook endpoints they go to, and the outbox of deliveries (emails and
 * webhooks) any instance's dispatcher claims with a lease. Same conventions as schema.ts: integer
 * milliseconds since the epoch, JSON as text, money in integer micro-USD.
 */

/**
 * One row per rule that fired for a budget in a period. Unique on (budget, period start, rule): of
 * several instances observing the same crossing, one inserts the row, and only the inserter queues
 * its deliveries.
 */
export interface BudgetAlertsTable {
  /** `alert_...`; the webhook payload's event id is `evt_` + the same suffix. */
  id: string;
  budget_id: string;
  /** Start of the budget's period, ms (0 for a `total` budget). */
  period_start: number;
  /** `threshold:<percent>` (e.g. `threshold:80`) or `projected`. */
  rule: string;
  organization_id: string;
  /** The key of a key budget; null for an organization budget. */
  key_id: string | null;
  /** `organization` or `key`. */
  scope: string;
  /** `day`, `week`, `month` or `total`. */
  period: string;
  /** End of the period (its reset), ms; null for `total`. */
  period_end: number | null;
  /** The budget's amount when the rule fired, micro-USD. */
  amount_micro_usd: number;
  /** Spent in the period when the rule fired, micro-USD. */
  spent_micro_usd: number;
  /** The threshold crossed, percent of the amount; null for `projected`. */
  threshold_percent: number | null;
  /** Spend projected to the period's end at the current rate, micro-USD; null for a threshold. */
  projected_micro_usd: number | null;
  /** The settlement that crossed it. */
  request_id: string;
  /** When the rule fired (the settlement's time), ms. */
  created_at: number;
}

/** Where signed webhooks go: an organization's endpoint (its owners'), or an operator's (every organization's alerts). */
export interface WebhookEndpointsTable {
  /** `whep_...`. */
  id: string;
  /** The organization whose alerts it receives; null for an operator's endpoint (every organization's). */
  organization_id: string | null;
  url: string;
  description: string | null;
  /** JSON array of the event types it receives. */
  events: string;
  /** The signing secret: `whsec_...` as it is, or `enc1:...` encrypted with ALERT_WEBHOOK_SECRETS_KEY. */
  secret: string;
  /** Who registered it: an owner's or operator's email, or `cli`. */
  created_by: string;
  created_at: number;
}

/** The outbox: one row per message to one recipient (an email address or an endpoint), with its delivery log. */
export interface AlertDeliveriesTable {
  /** `msg_...`: the webhook's `webhook-id`, the same on every retry. */
  id: string;
  /** The alert it delivers; null for a `webhook.test` sample. */
  alert_id: string | null;
  /** `budget.threshold_reached`, `budget.projected_to_exceed` or `webhook.test`. */
  event_type: string;
  /** The organization the event is about; null for an operator's test sample. */
  organization_id: string | null;
  /** Whose delivery log shows it: the organization whose owners it is for; null for an operator endpoint's. */
  audience_organization_id: string | null;
  /** `email` or `webhook`. */
  kind: string;
  /** The webhook endpoint; null for an email (and once the endpoint is deleted). */
  endpoint_id: string | null;
  /** The email address, or the endpoint's URL when it was queued. */
  target: string;
  /** A webhook's exact JSON body; an email's `{ subject, text }` as JSON. */
  payload: string;
  /** `pending`, `delivered` or `failed`. */
  status: string;
  attempts: number;
  /** When the next attempt is due, ms. */
  next_attempt_at: number;
  /** After this an attempt that fails marks the delivery failed, ms (created_at plus the retry window). */
  give_up_at: number;
  /** The instance that holds it while an attempt runs, and until when (ms); null when free. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** Why the last attempt failed (no secrets, no addresses), or null. */
  last_error: string | null;
  /** The HTTP status of the last webhook attempt that got an answer, or null. */
  last_status_code: number | null;
  last_attempt_at: number | null;
  created_at: number;
  /** When it was delivered or marked failed, ms; null while pending. */
  finished_at: number | null;
}

export interface AlertsSchema {
  budget_alerts: BudgetAlertsTable;
  webhook_endpoints: WebhookEndpointsTable;
  alert_deliveries: AlertDeliveriesTable;
}
