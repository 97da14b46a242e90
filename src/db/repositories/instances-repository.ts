/** The `instance_configs` table: each running instance's config hash and heartbeat (migration 0120). */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export interface InstanceRow {
  id: string;
  configHash: string;
  /** Milliseconds since the epoch. */
  heartbeatAt: number;
}

export class InstancesRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Records (or renews) this instance's row. */
  async beat(id: string, configHash: string, nowMs: number): Promise<void> {
    await this.db
      .insertInto('instance_configs')
      .values({ id, config_hash: configHash, started_at: nowMs, heartbeat_at: nowMs })
      .onConflict((conflict) => conflict.column('id').doUpdateSet({ config_hash: configHash, heartbeat_at: nowMs }))
      .execute();
  }

  /** Instances heard from since `sinceMs`, by id. */
  async live(sinceMs: number): Promise<InstanceRow[]> {
    const rows = await this.db
      .selectFrom('instance_configs')
      .select(['id', 'config_hash', 'heartbeat_at'])
      .where('heartbeat_at', '>=', sinceMs)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({ id: row.id, configHash: row.config_hash, heartbeatAt: Number(row.heartbeat_at) }));
  }

  /** An instance that stops cleanly leaves the list at once. */
  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('instance_configs').where('id', '=', id).execute();
  }
}
