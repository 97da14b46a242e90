/**
 * The `instances` table: one row per running instance, renewed by its one heartbeat
 * (services/instances/config-agreement.ts): its id (the batch-lease worker id), version, start time,
 * last heartbeat and the hash of its effective config. The operator's fleet page lists the live rows;
 * config agreement compares their hashes (migrations 0100 and 0131, which merged `instance_configs` in).
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export interface InstanceRow {
  id: string;
  /** package.json version of the instance. */
  version: string;
  /** sha256 hex of its effective config; null for a row an older version wrote (it published none). */
  configHash: string | null;
  /** Milliseconds since the epoch (this and `lastSeenAt`). */
  startedAt: number;
  lastSeenAt: number;
}

export class InstancesRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Records (or renews) this instance's row. */
  async beat(instance: Omit<InstanceRow, 'lastSeenAt'> & { configHash: string }, nowMs: number): Promise<void> {
    const row = { version: instance.version, config_hash: instance.configHash, started_at: instance.startedAt, last_seen_at: nowMs };
    await this.db
      .insertInto('instances')
      .values({ id: instance.id, ...row })
      .onConflict((conflict) => conflict.column('id').doUpdateSet(row))
      .execute();
  }

  /** Instances heard from since `sinceMs`, newest start first. */
  async live(sinceMs: number): Promise<InstanceRow[]> {
    const rows = await this.db
      .selectFrom('instances')
      .selectAll()
      .where('last_seen_at', '>=', sinceMs)
      .orderBy('started_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      version: row.version,
      configHash: row.config_hash,
      startedAt: Number(row.started_at),
      lastSeenAt: Number(row.last_seen_at),
    }));
  }

  /** An instance that stops cleanly leaves the list at once. */
  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('instances').where('id', '=', id).execute();
  }
}
