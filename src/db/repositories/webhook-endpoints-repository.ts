/**
 * Where budget alerts' signed webhooks go (migration 0190): an organization's endpoints (registered by
 * its owners) and the operators' (organization null: every organization's alerts). The secret is kept
 * in the form the alerts service hands over (as it is, or encrypted); this repository never reads it.
 * Works over the database or inside a transaction.
 */
import type { Kysely, Selectable } from 'kysely';
import type { WebhookEndpointsTable } from '../alerts-schema.ts';
import type { WebhookEndpointRecord, WebhookEndpointRecords } from '../../services/alerts/alert-records.ts';
import type { DatabaseSchema } from '../schema.ts';

// The record and the port are the alerts service's (services/alerts/alert-records.ts).
export type { WebhookEndpointRecord } from '../../services/alerts/alert-records.ts';

export function toEndpointRecord(row: Selectable<WebhookEndpointsTable>): WebhookEndpointRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as string[],
    secret: row.secret,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
  };
}

export class WebhookEndpointsRepository implements WebhookEndpointRecords {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(record: WebhookEndpointRecord): Promise<void> {
    await this.db
      .insertInto('webhook_endpoints')
      .values({
        id: record.id,
        organization_id: record.organizationId,
        url: record.url,
        description: record.description,
        events: JSON.stringify(record.events),
        secret: record.secret,
        created_by: record.createdBy,
        created_at: record.createdAt,
      })
      .execute();
  }

  /** An organization's endpoints (`null`: the operators'), oldest first. */
  async list(organizationId: string | null): Promise<WebhookEndpointRecord[]> {
    let query = this.db.selectFrom('webhook_endpoints').selectAll();
    query = organizationId === null ? query.where('organization_id', 'is', null) : query.where('organization_id', '=', organizationId);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map(toEndpointRecord);
  }

  async count(organizationId: string | null): Promise<number> {
    let query = this.db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('count'));
    query = organizationId === null ? query.where('organization_id', 'is', null) : query.where('organization_id', '=', organizationId);
    const row = await query.executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  async find(id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toEndpointRecord(row);
  }

  /**
   * Deletes the endpoint if it belongs to `organizationId` (`null`: an operator's), and in the same
   * transaction ends its pending deliveries as failed (the log keeps them); true when one was deleted.
   */
  async delete(id: string, organizationId: string | null, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      let query = transaction.deleteFrom('webhook_endpoints').where('id', '=', id);
      query = organizationId === null ? query.where('organization_id', 'is', null) : query.where('organization_id', '=', organizationId);
      const result = await query.executeTakeFirst();
      if (Number(result.numDeletedRows) !== 1) return false;
      await transaction
        .updateTable('alert_deliveries')
        .set({ status: 'failed', last_error: 'the endpoint was deleted', finished_at: now, lease_owner: null, lease_expires_at: null })
        .where('endpoint_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      return true;
    });
  }

  /** The endpoints an event about `organizationId` goes to: the organization's own and every operator endpoint, oldest first. */
  async receiving(organizationId: string, eventType: string): Promise<WebhookEndpointRecord[]> {
    const rows = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where((eb) => eb.or([eb('organization_id', '=', organizationId), eb('organization_id', 'is', null)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toEndpointRecord).filter((endpoint) => endpoint.events.includes(eventType));
  }
}
