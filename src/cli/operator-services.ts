/**
 * What the operator's commands (`orgs`, `operators`, `owners`, `keys update`) share: the database,
 * the organization, people and key services built on it, the link base URL, and the CLI's place in
 * the operators' audit log (actor `cli`).
 */
import { createAccountServices } from '../accounts/account-services.ts';
import { KeyService } from '../accounts/key-service.ts';
import type { OrganizationService } from '../accounts/organizations.ts';
import { DashboardAccounts } from '../accounts/dashboard-accounts.ts';
import type { PeopleService } from '../accounts/people.ts';
import type { Config } from '../config/index.ts';
import { isServiceError } from '../core/service-error.ts';
import type { Database } from '../db/database.ts';
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { OwnersRepository } from '../db/repositories/owners-repository.ts';
import { openMigratedDatabase } from '../runtime.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';

export interface OperatorServices {
  organizations: OrganizationService;
  people: PeopleService;
  keys: KeyService;
  accounts: DashboardAccounts;
  owners: OwnersRepository;
  /** The migrated database the services stand on (closed when the work is done). */
  database: Database;
}

/** Where links point: `--base-url`, else PUBLIC_BASE_URL, else this host and port. */
export function linkBaseUrl(config: Config, parsed: ParsedArguments): string {
  const flag = parsed.flags['base-url'];
  if (typeof flag === 'string') return flag;
  return config.server.publicBaseUrl ?? `http://${config.server.host}:${config.server.port}`;
}

/**
 * When a printed link was built from this command's own HOST and PORT (neither --base-url nor
 * PUBLIC_BASE_URL): the sentence saying so and where to set the address; undefined otherwise.
 */
export function linkBaseNote(config: Config, parsed: ParsedArguments): string | undefined {
  if (typeof parsed.flags['base-url'] === 'string' || config.server.publicBaseUrl !== undefined) return undefined;
  return `The link uses ${linkBaseUrl(config, parsed)}, this command's own HOST and PORT: if people reach the service at another address, set PUBLIC_BASE_URL (in the service's environment file on a systemd install) or pass --base-url.`;
}

/** Runs `work` with the services on a migrated database; SPEC errors become one-line CLI errors. */
export async function withOperatorServices<T>(config: Config, work: (services: OperatorServices) => Promise<T>): Promise<T> {
  const database = await openMigratedDatabase(config);
  const services = createAccountServices(
    config,
    database.db,
    {
      // The commands print the links themselves; only a failure to send is worth a line.
      info: () => undefined,
      error: (object, message) => process.stderr.write(`${message}: ${String((object as { err?: unknown }).err)}\n`),
    },
    database.dialect,
  );
  try {
    const owners = new OwnersRepository(database.db, database.dialect);
    const accounts = new DashboardAccounts(owners);
    return await work({
      organizations: services.organizations,
      people: services.people(accounts),
      keys: new KeyService(config, new ApiKeysRepository(database.db), Date.now, services.organizations),
      accounts,
      owners,
      database,
    });
  } catch (error) {
    if (isServiceError(error)) throw new CliUsageError(error.message);
    throw error;
  } finally {
    services.mailer.close();
    await database.close();
  }
}

/** `a,b , c` -> `['a', 'b', 'c']`. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}
