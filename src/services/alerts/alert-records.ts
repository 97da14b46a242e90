/**
 * The budget alerts' records as the alerts service owns them (fired alerts, the delivery outbox and
 * log, webhook endpoints) and the ports it keeps them through (only the methods it uses). The database
 * implements them (db/repositories/budget-alerts-repository.ts, alert-deliveries-repository.ts,
 * webhook-endpoints-repository.ts); the runtime wires those in. Nothing here imports anything.
 */
export interface FiredAlert {
  /** `alert_...`. */
  id: string;
  budgetId: string;
  /** Milliseconds since the epoch (0 for a `total` budget), as every time below. */
  periodStart: number;
  /** `threshold:<percent>` or `projected`. */
  rule: string;
  organizationId: string;
  keyId: string | null;
  scope: 'organization' | 'key';
  period: 'day' | 'week' | 'month' | 'total';
  periodEnd: number | null;
  /** Micro-USD, as every amount below. */
  amountMicroUsd: number;
  spentMicroUsd: number;
  /** Percent of the amount; null for the projected rule. */
  thresholdPercent: number | null;
  projectedMicroUsd: number | null;
  requestId: string;
  createdAt: number;
}

/** Who an alert goes to, read in the transaction that inserts it. */
export interface AlertAudience {
  /** Emails of the organization's owners (role `owner`), sorted. */
  ownerEmails: string[];
  /** The organization's endpoints and the operators' that take the event type. */
  endpoints: WebhookEndpointRecord[];
  /** The key of a key budget as people know it (its name, else its redacted form); null for an organization budget. */
  keyLabel: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type DeliveryKind = 'email' | 'webhook';

export interface DeliveryRecord {
  /** `msg_...`, the webhook's `webhook-id`. */
  id: string;
  alertId: string | null;
  eventType: string;
  organizationId: string | null;
  /** Whose log shows it: an organization, or null for an operator endpoint's delivery. */
  audienceOrganizationId: string | null;
  kind: DeliveryKind;
  endpointId: string | null;
  /** An email address, or the endpoint's URL. */
  target: string;
  /** A webhook's JSON body, or an email's `{ subject, text }` as JSON. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  /** Milliseconds since the epoch, as every time below. */
  nextAttemptAt: number;
  giveUpAt: number;
  lastError: string | null;
  lastStatusCode: number | null;
  lastAttemptAt: number | null;
  createdAt: number;
  finishedAt: number | null;
}

/** A delivery as queued: pending, no attempt yet. */
export type NewDelivery = Omit<DeliveryRecord, 'status' | 'attempts' | 'lastError' | 'lastStatusCode' | 'lastAttemptAt' | 'finishedAt'>;

export interface DeliveryPageQuery {
  /** Only the log of this organization's owners; absent: every delivery (operators). */
  audienceOrganizationId?: string;
  /** Only deliveries about this organization. */
  organizationId?: string;
  status?: DeliveryStatus;
  /** Most rows returned. */
  limit: number;
  /** Cursor: rows strictly older than this one (newest first). */
  after?: { createdAt: number; id: string };
}

/** The outcome of a failed attempt: retried at `retryAt`, or (null) marked failed. */
export interface FailedAttempt {
  error: string;
  statusCode: number | null;
  retryAt: number | null;
}

export interface WebhookEndpointRecord {
  /** `whep_...`. */
  id: string;
  /** Null for an operator's endpoint (every organization's alerts). */
  organizationId: string | null;
  url: string;
  description: string | null;
  /** Event types it receives. */
  events: string[];
  /** As stored: `whsec_...`, or `enc1:...` when encrypted at rest. */
  secret: string;
  createdBy: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** Fired alerts (db/repositories/budget-alerts-repository.ts implements it). */
export interface BudgetAlertRecords {
  /**
   * Inserts `alert` unless its budget, period and rule already fired; when inserted, queues the
   * deliveries `deliveriesOf` makes for its audience in the same transaction. True when inserted.
   */
  fire(alert: FiredAlert, eventType: string, deliveriesOf: (audience: AlertAudience) => NewDelivery[]): Promise<boolean>;
  /** Deletes up to `batchSize` alerts of periods that ended before `beforeMs` (no observation can carry them again). */
  purgeEndedBefore(beforeMs: number, batchSize: number): Promise<number>;
}

/** The outbox and delivery log (db/repositories/alert-deliveries-repository.ts implements it). */
export interface AlertDeliveryRecords {
  insert(delivery: NewDelivery): Promise<void>;
  find(id: string): Promise<DeliveryRecord | undefined>;
  /** How many deliveries of `eventType` to the endpoint are still pending. */
  countPending(endpointId: string, eventType: string): Promise<number>;
  /** Leases up to `limit` due pending deliveries (oldest due first) to `workerId` until `now + leaseMs`. */
  claim(workerId: string, now: number, leaseMs: number, limit: number): Promise<DeliveryRecord[]>;
  /** Records a delivered attempt, if `workerId` still holds the delivery; true when recorded. */
  delivered(id: string, workerId: string, now: number, statusCode: number | null): Promise<boolean>;
  /** Records a failed attempt (retried at `retryAt`, or marked failed), if `workerId` still holds the delivery. */
  attemptFailed(id: string, workerId: string, now: number, outcome: FailedAttempt): Promise<DeliveryStatus | undefined>;
  /** Holds back the other pending deliveries to an endpoint that just failed until `until`. */
  postponeEndpoint(endpointId: string, until: number, now: number): Promise<number>;
  /** Gives back what `workerId` holds unattempted (stopping), for any instance to take at once. */
  releaseHeldBy(workerId: string): Promise<number>;
  /** A page of the delivery log, newest first. */
  page(query: DeliveryPageQuery): Promise<DeliveryRecord[]>;
  /** Deletes up to `batchSize` delivered or failed deliveries that finished before `beforeMs`; how many. */
  purgeFinishedBefore(beforeMs: number, batchSize: number): Promise<number>;
}

/** Webhook endpoints (db/repositories/webhook-endpoints-repository.ts implements it). */
export interface WebhookEndpointRecords {
  insert(record: WebhookEndpointRecord): Promise<void>;
  /** An organization's endpoints (`null`: the operators'), oldest first. */
  list(organizationId: string | null): Promise<WebhookEndpointRecord[]>;
  count(organizationId: string | null): Promise<number>;
  find(id: string): Promise<WebhookEndpointRecord | undefined>;
  /** Deletes the endpoint if it belongs to `organizationId` (`null`: an operator's) and fails its pending deliveries; true when one was deleted. */
  delete(id: string, organizationId: string | null, now: number): Promise<boolean>;
}
