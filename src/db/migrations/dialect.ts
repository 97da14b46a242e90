/** What a migration may need to know of its database: the dialect, and column helpers that spell the same thing in each. */
import type { ColumnDefinitionBuilder } from 'kysely';

export type MigrationDialect = 'sqlite' | 'postgres';

/** An auto-incrementing integer primary key in each dialect's own spelling. */
export function autoIncrementKey(dialect: MigrationDialect): (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return (column) => (dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity());
}
