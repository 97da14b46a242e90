/**
 * The alerts' outbox and delivery log (migration 0190). Any instance's dispatcher claims due pending
 * deliveries with a lease, the house's way (batch-leases.ts): one statement that only picks rows whose
 * lease is free or lapsed, `FOR UPDATE SKIP LOCKED` on Postgres so claimants never wait on each other
 * (on SQLite the statement is itself the single writer's transaction). Every outcome is written only
 * while the lease is still held, so a delivery taken over by another instance is recorded once.
 */
import { PostgresAdapter, type Kysely, type Selectable } from 'kysely';
import type { AlertDeliveriesTable } from '../alerts-schema.ts';
import type {
  AlertDeliveryRecords,
  DeliveryKind,
  DeliveryPageQuery,
  DeliveryRecord,
  DeliveryStatus,
  FailedAttempt,
  NewDelivery,
} from '../../services/alerts/alert-records.ts';
import type { DatabaseSchema } from '../schema.ts';

// The records and the port are the alerts service's (services/alerts/alert-records.ts).
export type {
  DeliveryKind,
  DeliveryPageQuery,
  DeliveryRecord,
  DeliveryStatus,
  FailedAttempt,
  NewDelivery,
} from '../../services/alerts/alert-records.ts';

function toRecord(row: Selectable<AlertDeliveriesTable>): DeliveryRecord {
  const optional = (value: number | null) => (value === null ? null : Number(value));
  return {
    id: row.id,
    alertId: row.alert_id,
    eventType: row.event_type,
    organizationId: row.organization_id,
    audienceOrganizationId: row.audience_organization_id,
    kind: row.kind as DeliveryKind,
    endpointId: row.endpoint_id,
    target: row.target,
    payload: row.payload,
    status: row.status as DeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    giveUpAt: Number(row.give_up_at),
    lastError: row.last_error,
    lastStatusCode: optional(row.last_status_code),
    lastAttemptAt: optional(row.last_attempt_at),
    createdAt: Number(row.created_at),
    finishedAt: optional(row.finished_at),
  };
}

/** The row of a new delivery (pending, no attempt yet). */
export function deliveryRow(delivery: NewDelivery) {
  return {
    id: delivery.id,
    alert_id: delivery.alertId,
    event_type: delivery.eventType,
    organization_id: delivery.organizationId,
    audience_organization_id: delivery.audienceOrganizationId,
    kind: delivery.kind,
    endpoint_id: delivery.endpointId,
    target: delivery.target,
    payload: delivery.payload,
    status: 'pending',
    attempts: 0,
    next_attempt_at: delivery.nextAttemptAt,
    give_up_at: delivery.giveUpAt,
    created_at: delivery.createdAt,
  };
}

export class AlertDeliveriesRepository implements AlertDeliveryRecords {
  /** Postgres takes row locks with SKIP LOCKED; SQLite runs one writer at a time anyway. */
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<DatabaseSchema>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async insert(delivery: NewDelivery): Promise<void> {
    await this.db.insertInto('alert_deliveries').values(deliveryRow(delivery)).execute();
  }

  async find(id: string): Promise<DeliveryRecord | undefined> {
    const row = await this.db.selectFrom('alert_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  /** How many deliveries of `eventType` to the endpoint are still pending. */
  async countPending(endpointId: string, eventType: string): Promise<number> {
    const row = await this.db
      .selectFrom('alert_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('endpoint_id', '=', endpointId)
      .where('event_type', '=', eventType)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  /** Leases up to `limit` due pending deliveries (oldest due first) to `workerId` until `now + leaseMs`. */
  async claim(workerId: string, now: number, leaseMs: number, limit: number): Promise<DeliveryRecord[]> {
    const due = (db: Kysely<DatabaseSchema>) =>
      db
        .selectFrom('alert_deliveries')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .orderBy('next_attempt_at')
        .limit(limit);
    const lease = (db: Kysely<DatabaseSchema>, ids: readonly string[] | ReturnType<typeof due>) =>
      db
        .updateTable('alert_deliveries')
        .set({ lease_owner: workerId, lease_expires_at: now + leaseMs })
        .where('id', 'in', ids)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .returningAll()
        .execute();
    if (!this.postgres) return (await lease(this.db, due(this.db))).map(toRecord);
    const rows = await this.db.transaction().execute(async (transaction) => {
      const locked = await due(transaction).forUpdate().skipLocked().execute();
      return locked.length === 0
        ? []
        : lease(
            transaction,
            locked.map((row) => row.id),
          );
    });
    return rows.map(toRecord);
  }

  /** Records a delivered attempt, if `workerId` still holds the delivery; true when recorded. */
  async delivered(id: string, workerId: string, now: number, statusCode: number | null): Promise<boolean> {
    return this.recordAttempt(id, workerId, now, { status: 'delivered', statusCode, error: null, nextAttemptAt: now, finishedAt: now });
  }

  /** Records a failed attempt (retried at `retryAt`, or marked failed), if `workerId` still holds the delivery. */
  async attemptFailed(id: string, workerId: string, now: number, outcome: FailedAttempt): Promise<DeliveryStatus | undefined> {
    const status: DeliveryStatus = outcome.retryAt === null ? 'failed' : 'pending';
    const recorded = await this.recordAttempt(id, workerId, now, {
      status,
      statusCode: outcome.statusCode,
      error: outcome.error,
      nextAttemptAt: outcome.retryAt ?? now,
      finishedAt: outcome.retryAt === null ? now : null,
    });
    return recorded ? status : undefined;
  }

  /** One attempt counted on a pending delivery `workerId` still holds, its lease freed; true when recorded. */
  private async recordAttempt(
    id: string,
    workerId: string,
    now: number,
    outcome: { status: DeliveryStatus; statusCode: number | null; error: string | null; nextAttemptAt: number; finishedAt: number | null },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('alert_deliveries')
      .set((eb) => ({
        status: outcome.status,
        attempts: eb('attempts', '+', 1),
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
        last_attempt_at: now,
        next_attempt_at: outcome.nextAttemptAt,
        finished_at: outcome.finishedAt,
        lease_owner: null,
        lease_expires_at: null,
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Holds back the other pending deliveries to an endpoint that just failed until `until`: a dead
   * endpoint costs one attempt per backoff step, not one per queued message. Leased rows are left alone.
   */
  async postponeEndpoint(endpointId: string, until: number, now: number): Promise<number> {
    const result = await this.db
      .updateTable('alert_deliveries')
      .set({ next_attempt_at: until })
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<', until)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Gives back what `workerId` holds unattempted (stopping), for any instance to take at once. */
  async releaseHeldBy(workerId: string): Promise<number> {
    const result = await this.db
      .updateTable('alert_deliveries')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** A page of the delivery log, newest first. */
  async page(query: DeliveryPageQuery): Promise<DeliveryRecord[]> {
    let select = this.db.selectFrom('alert_deliveries').selectAll();
    if (query.audienceOrganizationId !== undefined) select = select.where('audience_organization_id', '=', query.audienceOrganizationId);
    if (query.organizationId !== undefined) select = select.where('organization_id', '=', query.organizationId);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    const after = query.after;
    if (after !== undefined) {
      select = select.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    }
    const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(toRecord);
  }

  /** Deletes up to `batchSize` delivered or failed deliveries that finished before `beforeMs`; how many. */
  async purgeFinishedBefore(beforeMs: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('alert_deliveries')
      .where(
        'id',
        'in',
        this.db
          .selectFrom('alert_deliveries')
          .select('id')
          .where('status', '!=', 'pending')
          .where('finished_at', '<', beforeMs)
          .limit(batchSize),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
