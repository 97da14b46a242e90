/**
 * The database for a command that only reads (`keys list`, `orgs list|show`, `owners list`, `usage`):
 * an SQLite file that does not exist is not created. Such a command run without the service's
 * environment (a systemd install keeps its database in /var/lib/switchyard, not `./data`) would
 * otherwise make a new, empty database and answer from it as if nothing existed.
 */
import { existsSync } from 'node:fs';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/database.ts';
import { openMigratedDatabase } from '../runtime.ts';
import { CliUsageError } from './arguments.ts';

/** The SQLite file of `databaseUrl`, or undefined for Postgres and in-memory SQLite. */
function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const path = databaseUrl.slice('sqlite:'.length);
  return path === '' || path === ':memory:' ? undefined : path;
}

/** Refuses, in one sentence, when the command would read from a database it has to create first. */
export function requireExistingDatabase(config: Config): void {
  const file = sqliteFile(config.databaseUrl);
  if (file === undefined || existsSync(file)) return;
  throw new CliUsageError(
    `There is no database at ${file} (DATA_DIR=${config.dataDir}), and this command only reads, so it does not create one. ` +
      `Run it with the service's environment: on a systemd install use the switchyard wrapper (deploy/switchyard) or --environment-file /etc/switchyard/switchyard.env; otherwise set DATA_DIR or DATABASE_URL as the service has them.`,
  );
}

/** The migrated database for a reading command; refuses instead of creating a new SQLite file. */
export async function openExistingDatabase(config: Config): Promise<Database> {
  requireExistingDatabase(config);
  return openMigratedDatabase(config);
}
