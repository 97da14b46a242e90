/**
 * Budget alerts that fired (migration 0190): one row per budget, period and rule, unique, so that of
 * every instance observing the same crossing exactly one inserts it. The inserter, and only it, queues
 * the alert's deliveries, in the same transaction: an alert row never exists without its deliveries,
 * and a failed write leaves neither (the next observation of the budget tries again).
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';
import type { AlertAudience, BudgetAlertRecords, FiredAlert, NewDelivery } from '../../services/alerts/alert-records.ts';
import { deliveryRow } from './alert-deliveries-repository.ts';
import { WebhookEndpointsRepository } from './webhook-endpoints-repository.ts';

// The records and the port are the alerts service's (services/alerts/alert-records.ts).
export type { AlertAudience, FiredAlert } from '../../services/alerts/alert-records.ts';

export class BudgetAlertsRepository implements BudgetAlertRecords {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /**
   * Inserts `alert` unless its budget, period and rule already fired; when inserted, queues the
   * deliveries `deliveriesOf` makes for its audience in the same transaction. True when inserted.
   */
  async fire(alert: FiredAlert, eventType: string, deliveriesOf: (audience: AlertAudience) => NewDelivery[]): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const inserted = await transaction
        .insertInto('budget_alerts')
        .values({
          id: alert.id,
          budget_id: alert.budgetId,
          period_start: alert.periodStart,
          rule: alert.rule,
          organization_id: alert.organizationId,
          key_id: alert.keyId,
          scope: alert.scope,
          period: alert.period,
          period_end: alert.periodEnd,
          amount_micro_usd: alert.amountMicroUsd,
          spent_micro_usd: alert.spentMicroUsd,
          threshold_percent: alert.thresholdPercent,
          projected_micro_usd: alert.projectedMicroUsd,
          request_id: alert.requestId,
          created_at: alert.createdAt,
        })
        .onConflict((conflict) => conflict.columns(['budget_id', 'period_start', 'rule']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted === undefined) return false;
      const deliveries = deliveriesOf(await audienceOf(transaction, alert, eventType));
      for (let start = 0; start < deliveries.length; start += 100) {
        await transaction
          .insertInto('alert_deliveries')
          .values(deliveries.slice(start, start + 100).map(deliveryRow))
          .execute();
      }
      return true;
    });
  }

  /** Whether the budget's rule already fired in the period (tests and the CLI). */
  async fired(budgetId: string, periodStart: number, rule: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('budget_alerts')
      .select('id')
      .where('budget_id', '=', budgetId)
      .where('period_start', '=', periodStart)
      .where('rule', '=', rule)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes up to `batchSize` alerts of periods that ended before `beforeMs` (no observation can carry them again). */
  async purgeEndedBefore(beforeMs: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('budget_alerts')
      .where('id', 'in', this.db.selectFrom('budget_alerts').select('id').where('period_end', '<', beforeMs).limit(batchSize))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

async function audienceOf(db: Kysely<DatabaseSchema>, alert: FiredAlert, eventType: string): Promise<AlertAudience> {
  const owners = await db
    .selectFrom('owners')
    .select('email')
    .where('organization_id', '=', alert.organizationId)
    .where('role', '=', 'owner')
    .orderBy('email')
    .execute();
  const endpoints = await new WebhookEndpointsRepository(db).receiving(alert.organizationId, eventType);
  let keyLabel: string | null = null;
  if (alert.keyId !== null) {
    const key = await db.selectFrom('api_keys').select(['name', 'redacted']).where('id', '=', alert.keyId).executeTakeFirst();
    keyLabel = key === undefined ? alert.keyId : (key.name ?? key.redacted);
  }
  return {
    ownerEmails: owners.map((owner) => owner.email),
    endpoints,
    keyLabel,
  };
}
