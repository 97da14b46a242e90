/**
 * `switchyard owners create --org O --email E [--role owner|member] [--tiers A,B] [--password-stdin]`:
 * the operator creates a dashboard account and gets a one-time set-password link (24 h), or sets the
 * password from standard input.
 */
import { DashboardAccounts } from '../accounts/dashboard-accounts.ts';
import { ownTier, type Config } from '../config/index.ts';
import { isServiceError } from '../core/service-error.ts';
import { OwnersRepository } from '../db/repositories/owners-repository.ts';
import { openMigratedDatabase } from '../runtime.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';
import { CLI_ACTOR } from '../accounts/organizations.ts';
import { createAccountServices } from '../accounts/account-services.ts';
import { setPasswordLink } from '../accounts/people.ts';
import { requireExistingDatabase } from './existing-database.ts';
import { linkBaseNote, linkBaseUrl, withOperatorServices } from './operator-services.ts';

const USAGE = `Usage: switchyard owners create --org <organization> --email <email> [--role owner|member] [--tiers Developer,Production] [--password-stdin] [--base-url URL]
       switchyard owners list --org <organization> [--json]
       switchyard owners remove --email <email>
       switchyard owners set-role --email <email> --role owner|member
       switchyard owners reset-link --email <email> [--base-url URL]`;

export { setPasswordLink };

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export async function ownersCommand(
  config: Config,
  parsed: ParsedArguments,
  print: (text: string) => void,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<void> {
  const [action] = parsed.positionals;
  const organization = parsed.flags['org'];
  const email = parsed.flags['email'];
  if (action === 'list' || action === 'remove' || action === 'set-role' || action === 'reset-link') {
    await managePeople(config, action, parsed, print);
    return;
  }
  if (action !== 'create' || typeof organization !== 'string' || typeof email !== 'string') throw new CliUsageError(USAGE);
  const role = parsed.flags['role'] ?? 'owner';
  if (role !== 'owner' && role !== 'member') throw new CliUsageError('--role is owner or member.');
  const tiersFlag = parsed.flags['tiers'];
  const allowedTiers =
    typeof tiersFlag === 'string'
      ? tiersFlag
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean)
      : undefined;
  const unknownTier = allowedTiers?.find((tier) => ownTier(config.tiers, tier) === undefined);
  if (unknownTier !== undefined)
    throw new CliUsageError(`Unknown tier "${unknownTier}". Configured tiers: ${Object.keys(config.tiers).join(', ')}.`);
  const password = parsed.flags['password-stdin'] === true ? await readStdin(stdin) : undefined;
  const database = await openMigratedDatabase(config);
  try {
    const accounts = new DashboardAccounts(new OwnersRepository(database.db, database.dialect));
    const { owner, linkToken } = await accounts.createOwner({
      organization,
      email,
      role,
      ...(password === undefined ? {} : { password }),
      ...(allowedTiers === undefined ? {} : { allowedTiers }),
    });
    await accounts.audit({ organizationId: owner.organizationId, email: 'operator' }, 'owner.created', owner.email, null);
    // A new organization's plan: the highest of `--tiers` (else the default tier); keys are bounded by it.
    const services = createAccountServices(config, database.db, { info: () => undefined, error: () => undefined }, database.dialect);
    await services.organizations.backfillPlans();
    services.mailer.close();
    print(`Created ${owner.role} ${owner.email} of organization ${owner.organizationId}.`);
    const baseUrl = linkBaseUrl(config, parsed);
    if (linkToken !== undefined) {
      print('One-time sign-in link to set the password (valid 24 hours):');
      print(setPasswordLink(baseUrl, linkToken));
      const note = linkBaseNote(config, parsed);
      if (note !== undefined) print(note);
    } else {
      print(`Password set; sign in at ${baseUrl.replace(/\/+$/, '')}/dashboard`);
    }
  } catch (error) {
    if (isServiceError(error)) throw new CliUsageError(error.message);
    throw error;
  } finally {
    await database.close();
  }
}

/** `owners list|remove|set-role|reset-link`: the operator's people management, logged in the operators' audit log. */
async function managePeople(
  config: Config,
  action: 'list' | 'remove' | 'set-role' | 'reset-link',
  parsed: ParsedArguments,
  print: (text: string) => void,
): Promise<void> {
  if (action === 'list') requireExistingDatabase(config);
  await withOperatorServices(config, async ({ people, organizations, owners }) => {
    if (action === 'list') {
      const organization = parsed.flags['org'];
      if (typeof organization !== 'string') throw new CliUsageError(USAGE);
      await organizations.get(organization);
      const list = await people.list(organization);
      if (parsed.flags['json'] === true) return print(JSON.stringify(list));
      for (const person of list)
        print(
          `${person.email}  ${person.role}  ${person.passwordSet ? 'password set' : person.invitation ? 'invited' : 'no password yet'}  ${person.totpEnabled ? 'TOTP on' : 'TOTP off'}  last seen ${person.lastSeenAt === null ? '-' : new Date(person.lastSeenAt).toISOString()}`,
        );
      if (list.length === 0) print(`No people in ${organization}.`);
      return;
    }
    const email = parsed.flags['email'];
    if (typeof email !== 'string') throw new CliUsageError(USAGE);
    const person = await owners.findOwnerByEmail(email.trim().toLowerCase());
    if (person === undefined) throw new CliUsageError(`No account for ${email}.`);
    if (action === 'remove') {
      await people.remove(person);
      await organizations.audit(CLI_ACTOR, 'owner.removed', person.organizationId, person.email, null);
      print(`Removed ${person.email} from ${person.organizationId}; their sessions ended.`);
    } else if (action === 'set-role') {
      const role = parsed.flags['role'];
      if (role !== 'owner' && role !== 'member') throw new CliUsageError('--role is owner or member.');
      await people.setRole(person, role);
      await organizations.audit(CLI_ACTOR, 'owner.role_changed', person.organizationId, person.email, { from: person.role, to: role });
      print(`${person.email} is now ${role === 'owner' ? 'an owner' : 'a read-only member'} of ${person.organizationId}.`);
    } else {
      const issued = await people.resetLink(person, linkBaseUrl(config, parsed));
      await organizations.audit(CLI_ACTOR, 'owner.link_issued', person.organizationId, person.email, { delivery: issued.delivery });
      print(`One-time sign-in link for ${person.email} (valid 24 hours${issued.delivery === 'sent' ? ', also mailed' : ''}):`);
      print(issued.link);
    }
  });
}
