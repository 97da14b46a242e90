/**
 * Builds the accounts side the operator console and the people pages use, from the config and the
 * database: organizations with their plans, the operators' audit log, people, mail, and the key
 * limits the authenticator attaches to each key (its tier capped by its organization's plan).
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config/index.ts';
import type { ApiKeyRecord } from '../db/repositories/api-keys-repository.ts';
import { OperatorAuditRepository } from '../db/repositories/operator-audit-repository.ts';
import { OrganizationsRepository } from '../db/repositories/organizations-repository.ts';
import { OwnersRepository } from '../db/repositories/owners-repository.ts';
import { PeopleRepository } from '../db/repositories/people-repository.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import { createMailer, type MailLog, type Mailer } from './mailer.ts';
import { OrganizationService } from './organizations.ts';
import type { DashboardAccounts } from './dashboard-accounts.ts';
import { PeopleService } from './people.ts';
import { effectivePlan, keyLimits, parseOverrides, type KeyPlanLimits } from './plans.ts';

export interface AccountServices {
  organizations: OrganizationService;
  operatorAudit: OperatorAuditRepository;
  mailer: Mailer;
  /** Builds the people service once the owner accounts exist. */
  people(accounts: DashboardAccounts): PeopleService;
}

/** A key's limits from the plan read with it; before the plan backfill, the key's own tier stands for the plan. */
export function planLimitsOf(config: Config): (record: ApiKeyRecord) => KeyPlanLimits {
  return (record) => {
    const organization = record.organization;
    const plan = effectivePlan(config, organization?.plan ?? record.tier, parseOverrides(organization?.planOverrides ?? null));
    return keyLimits(config, record.tier, plan);
  };
}

/** `dialect`: on Postgres the invitation limits reserve their count behind an advisory lock (sign-in-attempts-repository.ts). */
export function createAccountServices(
  config: Config,
  db: Kysely<DatabaseSchema>,
  log: MailLog,
  dialect: 'sqlite' | 'postgres' = 'sqlite',
): AccountServices {
  const operatorAudit = new OperatorAuditRepository(db);
  const organizations = new OrganizationService(config, new OrganizationsRepository(db), operatorAudit);
  const mailer = createMailer(config.smtp, log);
  return {
    organizations,
    operatorAudit,
    mailer,
    people: (accounts) =>
      new PeopleService({
        accounts,
        owners: new OwnersRepository(db, dialect),
        people: new PeopleRepository(db),
        mailer,
        limits: config.invitations,
        now: () => accounts.time(),
      }),
  };
}
