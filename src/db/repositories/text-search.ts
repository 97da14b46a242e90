/**
 * "Contains this text, whatever the case" as one SQL condition that SQLite and Postgres read alike:
 * `lower(column) LIKE '%text%' ESCAPE '!'`, with the text's own `%`, `_` and `!` escaped. For the
 * dashboard's list searches (keys, files, batches, audit log).
 */
import { sql, type Expression, type SqlBool } from 'kysely';

export function containsText(column: string, text: string): Expression<SqlBool> {
  const pattern = `%${text.toLowerCase().replace(/[!%_]/g, '!$&')}%`;
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern} escape '!'`;
}
