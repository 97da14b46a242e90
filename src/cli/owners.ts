/**
 * `switchyard owners create --org O --email E [--role owner|member] [--tiers A,B] [--password-stdin]`:
 * the operator creates a dashboard account and gets a one-time set-password link (24 h), or sets the
 * password from standard input.
 */
import { OwnerAccounts } from '../accounts/owner-accounts.ts';
import type { Config } from '../config/index.ts';
import { isServiceError } from '../core/service-error.ts';
import { OwnersRepository } from '../db/repositories/owners-repository.ts';
import { openMigratedDatabase } from '../runtime.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';

const USAGE =
  'Usage: switchyard owners create --org <organization> --email <email> [--role owner|member] [--tiers Developer,Production] [--password-stdin] [--base-url URL]';

/** The link an owner opens to set a password; the token is in the fragment, so it never reaches a server log. */
export function setPasswordLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard/set-password#token=${token}`;
}

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
  const unknownTier = allowedTiers?.find((tier) => config.tiers[tier] === undefined);
  if (unknownTier !== undefined)
    throw new CliUsageError(`Unknown tier "${unknownTier}". Configured tiers: ${Object.keys(config.tiers).join(', ')}.`);
  const password = parsed.flags['password-stdin'] === true ? await readStdin(stdin) : undefined;
  const database = await openMigratedDatabase(config);
  try {
    const accounts = new OwnerAccounts(new OwnersRepository(database.db, database.dialect));
    const { owner, linkToken } = await accounts.createOwner({
      organization,
      email,
      role,
      ...(password === undefined ? {} : { password }),
      ...(allowedTiers === undefined ? {} : { allowedTiers }),
    });
    await accounts.audit({ organizationId: owner.organizationId, email: 'operator' }, 'owner.created', owner.email, null);
    print(`Created ${owner.role} ${owner.email} of organization ${owner.organizationId}.`);
    if (linkToken !== undefined) {
      const baseUrl =
        typeof parsed.flags['base-url'] === 'string' ? parsed.flags['base-url'] : `http://${config.server.host}:${config.server.port}`;
      print('One-time sign-in link to set the password (valid 24 hours):');
      print(setPasswordLink(baseUrl, linkToken));
    } else {
      print(`Password set; sign in at http://${config.server.host}:${config.server.port}/dashboard`);
    }
  } catch (error) {
    if (isServiceError(error)) throw new CliUsageError(error.message);
    throw error;
  } finally {
    await database.close();
  }
}
