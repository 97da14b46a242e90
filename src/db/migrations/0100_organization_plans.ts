/**
 * Migration `0100_organization_plans`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Plans per organization (a configured tier plus per-organization overrides of its figures),
 * suspension, the operators' audit log (apart from owners' logs), and one heartbeat row per
 * running instance for the operator's fleet page. Operators are `owners` rows with the role
 * `operator` in the reserved organization `_operators` (a name organization ids cannot take).
 */
import type { Kysely } from 'kysely';
import { autoIncrementKey, type MigrationDialect } from './dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('plan', 'text').execute();
  await db.schema.alterTable('organizations').addColumn('plan_overrides', 'text').execute();
  await db.schema
    .alterTable('organizations')
    .addColumn('status', 'text', (column) => column.notNull().defaultTo('active'))
    .execute();
  await db.schema.alterTable('organizations').addColumn('suspended_at', 'bigint').execute();
  await db
    .insertInto('organizations' as never)
    .values({ id: '_operators', name: 'Operators', created_at: Date.now(), status: 'system' } as never)
    .execute();
  await db.schema
    .createTable('operator_audit')
    .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', autoIncrementKey(dialect))
    .addColumn('actor', 'text', (column) => column.notNull())
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('organization_id', 'text')
    .addColumn('target', 'text')
    .addColumn('detail', 'text')
    .addColumn('address', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('operator_audit_time').on('operator_audit').column('created_at').execute();
  await db.schema
    .createTable('instances')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('version', 'text', (column) => column.notNull())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
    .execute();
}
