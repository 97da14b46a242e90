/** Builds single sign-on for the runtime from the config and the database (one call in runtime.ts). */
import type { Kysely } from 'kysely';
import type { Config } from '../../config/index.ts';
import type { OperatorAuditRepository } from '../../db/repositories/operator-audit-repository.ts';
import { OwnersRepository } from '../../db/repositories/owners-repository.ts';
import { PeopleRepository } from '../../db/repositories/people-repository.ts';
import { SsoRepository } from '../../db/repositories/sso-repository.ts';
import type { DatabaseSchema } from '../../db/schema.ts';
import type { DashboardAccounts } from '../dashboard-accounts.ts';
import { SsoSignIn } from './sso-sign-in.ts';

export function createSsoSignIn(
  config: Config,
  database: { db: Kysely<DatabaseSchema>; dialect: 'sqlite' | 'postgres' },
  accounts: DashboardAccounts,
  operatorAudit: OperatorAuditRepository,
): SsoSignIn {
  return new SsoSignIn({
    config: config.sso,
    accounts,
    owners: new OwnersRepository(database.db, database.dialect),
    people: new PeopleRepository(database.db),
    repository: new SsoRepository(database.db),
    operatorAudit,
  });
}
