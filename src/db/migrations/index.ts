/**
 * The one migration set, for SQLite and Postgres alike: one file per migration (`NNNN_name.ts`, exporting
 * `up(db, dialect)`), listed here in the order they apply. Append new migrations (a new file and a line
 * below); never edit or rename applied ones: the names are what each database records. Dialect
 * differences are confined to the column helpers of dialect.ts and a few marked branches.
 *
 * A static list rather than Kysely's FileMigrationProvider: it survives the build and bundling unchanged,
 * and a migration missing from the list is a type-checked import, not a file a directory scan may miss.
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationDialect } from './dialect.ts';
import * as m0001 from './0001_accounts_and_ledger.ts';
import * as m0002 from './0002_stored_responses.ts';
import * as m0003 from './0003_files_and_batches.ts';
import * as m0010 from './0010_blob_chunks.ts';
import * as m0020 from './0020_dashboard.ts';
import * as m0040 from './0040_stored_response_items.ts';
import * as m0050 from './0050_usage_ledger_deployment.ts';
import * as m0060 from './0060_batch_line_leases.ts';
import * as m0070 from './0070_usage_ledger_request_unique.ts';
import * as m0080 from './0080_dashboard_second_factor_and_retention.ts';
import * as m0100 from './0100_organization_plans.ts';
import * as m0120 from './0120_instance_configs.ts';
import * as m0130 from './0130_audit_log_window.ts';
import * as m0131 from './0131_one_instances_table.ts';
import * as m0180 from './0180_budgets.ts';
import * as m0190 from './0190_budget_alerts.ts';
import * as m0200 from './0200_storage_reservations.ts';
import * as m0210 from './0210_usage_ledger_cache.ts';
import * as m0220 from './0220_single_sign_on.ts';
import * as m0230 from './0230_invitations.ts';

export type { MigrationDialect } from './dialect.ts';

/** A migration file: `up` takes the dialect when its schema differs between SQLite and Postgres. */
interface MigrationModule {
  up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void>;
}

/** Every migration, in the order it applies (the names sort the same way). */
const MIGRATIONS: readonly (readonly [name: string, migration: MigrationModule])[] = [
  ['0001_accounts_and_ledger', m0001],
  ['0002_stored_responses', m0002],
  ['0003_files_and_batches', m0003],
  ['0010_blob_chunks', m0010],
  ['0020_dashboard', m0020],
  ['0040_stored_response_items', m0040],
  ['0050_usage_ledger_deployment', m0050],
  ['0060_batch_line_leases', m0060],
  ['0070_usage_ledger_request_unique', m0070],
  ['0080_dashboard_second_factor_and_retention', m0080],
  ['0100_organization_plans', m0100],
  ['0120_instance_configs', m0120],
  ['0130_audit_log_window', m0130],
  ['0131_one_instances_table', m0131],
  ['0180_budgets', m0180],
  ['0190_budget_alerts', m0190],
  ['0200_storage_reservations', m0200],
  ['0210_usage_ledger_cache', m0210],
  ['0220_single_sign_on', m0220],
  ['0230_invitations', m0230],
];

/** The migration set for one dialect, keyed by name (what Kysely's Migrator takes). */
export function createMigrations(dialect: MigrationDialect): Record<string, Migration> {
  const migrations: Record<string, Migration> = {};
  for (const [name, migration] of MIGRATIONS) migrations[name] = { up: (db) => migration.up(db, dialect) };
  return migrations;
}
