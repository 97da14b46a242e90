/**
 * The operators' audit log (who changed what, when, from where), kept apart from each organization's
 * own log. (The instances' heartbeat rows the fleet page reads are instances-repository.ts.)
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
}
