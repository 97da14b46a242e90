/**
 * The operators' audit log (who changed what, when, from where), kept apart from each organization's
 * own log, and the instances' heartbeat rows the fleet page reads.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export interface OperatorAuditEntry {
  id: number;
  /** The operator's email, or `cli`. */
  actor: string;
  action: string;
  organizationId: string | null;
  target: string | null;
  /** JSON text of what changed, or null. */
  detail: string | null;
  address: string | null;
  /** Milliseconds since epoch. */
  createdAt: number;
}

export interface InstanceRecord {
  id: string;
  version: string;
  /** Milliseconds since epoch (this and `lastSeenAt`). */
  startedAt: number;
  lastSeenAt: number;
}

export class OperatorAuditRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async append(entry: Omit<OperatorAuditEntry, 'id'>): Promise<void> {
    await this.db
      .insertInto('operator_audit')
      .values({
        actor: entry.actor,
        action: entry.action,
        organization_id: entry.organizationId,
        target: entry.target,
        detail: entry.detail,
        address: entry.address,
        created_at: entry.createdAt,
      })
      .execute();
  }

  /** Newest first; `beforeId` pages back; `organizationId` keeps one organization's entries. */
  async list(options: { limit: number; beforeId?: number; organizationId?: string }): Promise<OperatorAuditEntry[]> {
    let query = this.db.selectFrom('operator_audit').selectAll().orderBy('id', 'desc').limit(options.limit);
    if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
    if (options.organizationId !== undefined) query = query.where('organization_id', '=', options.organizationId);
    const rows = await query.execute();
    return rows.map((row) => ({
      id: Number(row.id),
      actor: row.actor,
      action: row.action,
      organizationId: row.organization_id,
      target: row.target,
      detail: row.detail,
      address: row.address,
      createdAt: Number(row.created_at),
    }));
  }

  /** Records that this instance is alive (insert or renew its row). */
  async heartbeat(instance: InstanceRecord): Promise<void> {
    await this.db
      .insertInto('instances')
      .values({ id: instance.id, version: instance.version, started_at: instance.startedAt, last_seen_at: instance.lastSeenAt })
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet({ version: instance.version, started_at: instance.startedAt, last_seen_at: instance.lastSeenAt }),
      )
      .execute();
  }

  /** Instances seen since `since` (milliseconds since epoch), newest start first. */
  async instances(since: number): Promise<InstanceRecord[]> {
    const rows = await this.db
      .selectFrom('instances')
      .selectAll()
      .where('last_seen_at', '>=', since)
      .orderBy('started_at', 'desc')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      version: row.version,
      startedAt: Number(row.started_at),
      lastSeenAt: Number(row.last_seen_at),
    }));
  }
}
