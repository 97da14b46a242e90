/**
 * Migration `0131_one_instances_table`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * one heartbeat table. `instances` (0100: the fleet page's rows) takes the config hash that
 * `instance_configs` (0120) kept, with the rows of both: a hash moves to the fleet row of the same id, an
 * instance only `instance_configs` knew becomes a fleet row (version `unknown`, until its next heartbeat),
 * the later of the two heartbeats is kept; then `instance_configs` is dropped. An instance of an older
 * version still running during a rolling upgrade keeps renewing its fleet row (without a hash, which
 * config agreement leaves out) and logs that its config heartbeat failed until it is replaced.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('instances').addColumn('config_hash', 'text').execute();
  await sql`UPDATE instances SET
        config_hash = (SELECT c.config_hash FROM instance_configs c WHERE c.id = instances.id),
        last_seen_at = (SELECT CASE WHEN c.heartbeat_at > instances.last_seen_at THEN c.heartbeat_at ELSE instances.last_seen_at END
          FROM instance_configs c WHERE c.id = instances.id)
      WHERE EXISTS (SELECT 1 FROM instance_configs c WHERE c.id = instances.id)`.execute(db);
  await sql`INSERT INTO instances (id, version, started_at, last_seen_at, config_hash)
      SELECT c.id, 'unknown', c.started_at, c.heartbeat_at, c.config_hash FROM instance_configs c
      WHERE NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = c.id)`.execute(db);
  await db.schema.dropTable('instance_configs').execute();
}
