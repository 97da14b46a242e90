/**
 * `switchyard keys create|list|revoke|update`: the operator's key management (SPEC: keys are not created
 * through the interface).
 */
import { KeyRequestError, KeyService, parseDuration } from '../accounts/key-service.ts';
import type { Config } from '../config/index.ts';
import { isServiceError } from '../core/service-error.ts';
import type { Database } from '../db/database.ts';
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { OwnersRepository } from '../db/repositories/owners-repository.ts';
import { openMigratedDatabase } from '../runtime.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';
import { requireExistingDatabase } from './existing-database.ts';
import { requireKnownOrganization } from './known-organization.ts';
import { createAccountServices } from '../accounts/account-services.ts';
import { CLI_ACTOR, type OrganizationService } from '../accounts/organizations.ts';
import { commaList } from './operator-services.ts';

/** A key's name as `keys list` and `keys update` show it: quoted (names may hold spaces), or `(no name)`. */
function keyName(name: string | null | undefined): string {
  return name === null || name === undefined || name === '' ? '(no name)' : JSON.stringify(name);
}

function iso(milliseconds: number | null): string {
  return milliseconds === null ? '-' : new Date(milliseconds).toISOString();
}

/** What every `keys` action works with, opened once per command. */
interface KeysContext {
  keys: KeyService;
  organizations: OrganizationService;
  database: Database;
  /** Appends to the organization's own audit log: what the operator does to its keys shows there too. */
  audit(organizationId: string, action: string, target: string): Promise<void>;
  json: boolean;
  print(text: string): void;
}

export async function keysCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action, ...rest] = parsed.positionals;
  if (action === 'list') requireExistingDatabase(config);
  const database = await openMigratedDatabase(config);
  try {
    // Keys are bounded by their organization's plan (accounts/plans.ts).
    const { organizations } = createAccountServices(
      config,
      database.db,
      { info: () => undefined, error: () => undefined },
      database.dialect,
    );
    const keys = new KeyService(config, new ApiKeysRepository(database.db), Date.now, organizations);
    const owners = new OwnersRepository(database.db);
    const audit = (organizationId: string, action: string, target: string): Promise<void> =>
      owners.appendAudit({ organizationId, actor: 'operator', action, target, address: null, createdAt: Date.now() });
    const context: KeysContext = { keys, organizations, database, audit, json: parsed.flags['json'] === true, print };
    switch (action) {
      case 'create':
        return await createKey(context, parsed);
      case 'list':
        return await listKeys(context, parsed);
      case 'revoke':
        return await revokeKey(context, rest[0]);
      case 'update':
        return await updateKey(context, parsed, rest[0]);
      default:
        throw new CliUsageError('Usage: switchyard keys create|list|revoke|update ...');
    }
  } catch (error) {
    // The plan's refusals (key_limit_reached past the cap) are one line, as the key request's are.
    if (error instanceof KeyRequestError || isServiceError(error)) throw new CliUsageError(error.message);
    throw error;
  } finally {
    await database.close();
  }
}

async function createKey({ keys, database, audit, json, print }: KeysContext, parsed: ParsedArguments): Promise<void> {
  const expiresIn = parsed.flags['expires-in'];
  let expiresInMs: number | undefined;
  if (typeof expiresIn === 'string') {
    expiresInMs = parseDuration(expiresIn);
    if (expiresInMs === undefined) throw new CliUsageError(`--expires-in "${expiresIn}" is not a duration; use e.g. 30d, 12h, 90m.`);
  }
  const permissions = parsed.flags['permissions'];
  const organization = parsed.flags['org'];
  // A new organization only when asked: a typo in --org must not make one silently.
  if (typeof organization === 'string' && parsed.flags['create-org'] !== true) {
    await requireKnownOrganization(
      new ApiKeysRepository(database.db),
      organization,
      'Add --create-org to create it with this key (`switchyard keys list` shows the organizations of existing keys).',
    );
  }
  const created = await keys.create({
    ...(typeof organization === 'string' ? { organization } : {}),
    ...(typeof parsed.flags['tier'] === 'string' ? { tier: parsed.flags['tier'] } : {}),
    ...(typeof permissions === 'string' ? { permissions: commaList(permissions) } : {}),
    ...(typeof parsed.flags['name'] === 'string' ? { name: parsed.flags['name'] } : {}),
    ...(expiresInMs === undefined ? {} : { expiresInMs }),
  });
  const { record } = created;
  await audit(record.organizationId, 'key.created', record.id);
  if (json) {
    print(
      JSON.stringify({
        id: record.id,
        key: created.key,
        organization: record.organizationId,
        tier: record.tier,
        permissions: record.permissions,
        expires_at: record.expiresAt === null ? null : iso(record.expiresAt),
      }),
    );
    return;
  }
  print(`Created key ${record.id} (organization ${record.organizationId}, tier ${record.tier}, expires ${iso(record.expiresAt)}).`);
  print(`Permissions: ${record.permissions.join(', ')}`);
  print('The key is shown only this once:');
  print(created.key);
}

async function listKeys({ keys, json, print }: KeysContext, parsed: ParsedArguments): Promise<void> {
  const records = await keys.list(typeof parsed.flags['org'] === 'string' ? parsed.flags['org'] : undefined);
  if (json) {
    print(JSON.stringify(records));
    return;
  }
  for (const record of records) {
    const state =
      record.revokedAt !== null ? 'revoked' : record.expiresAt !== null && record.expiresAt <= Date.now() ? 'expired' : 'active';
    print(
      `${record.id}  ${record.redacted}  ${keyName(record.name)}  ${record.organizationId}  ${record.tier}  ${state}  created ${iso(record.createdAt)}  expires ${iso(record.expiresAt)}`,
    );
  }
  if (records.length === 0) print('No keys.');
}

async function revokeKey({ keys, audit, print }: KeysContext, id: string | undefined): Promise<void> {
  if (id === undefined) throw new CliUsageError('Usage: switchyard keys revoke <key id>');
  if (!(await keys.revoke(id))) throw new CliUsageError(`No active key with id ${id}.`);
  await audit((await keys.findById(id))!.organizationId, 'key.revoked', id);
  print(`Revoked ${id}.`);
}

async function updateKey(
  { keys, organizations, audit, print }: KeysContext,
  parsed: ParsedArguments,
  id: string | undefined,
): Promise<void> {
  const tier = parsed.flags['tier'];
  const permissions = parsed.flags['permissions'];
  const name = parsed.flags['name'];
  if (id === undefined || (typeof tier !== 'string' && typeof permissions !== 'string' && typeof name !== 'string'))
    throw new CliUsageError('Usage: switchyard keys update <key id> [--tier T] [--permissions a,b] [--name N]');
  const before = await keys.findById(id);
  const updated = await keys.update(id, {
    ...(typeof tier === 'string' ? { tier } : {}),
    ...(typeof permissions === 'string' ? { permissions: commaList(permissions) } : {}),
    ...(typeof name === 'string' ? { name } : {}),
  });
  await audit(updated.organizationId, 'key.updated', id);
  await organizations.audit(CLI_ACTOR, 'key.updated', updated.organizationId, id, {
    tier: updated.tier,
    permissions: updated.permissions,
    // A rename is part of the change: the operators' audit log says from what to what.
    ...(typeof name === 'string' ? { name: { from: before?.name ?? null, to: updated.name ?? null } } : {}),
  });
  print(
    `Updated ${id}: name ${keyName(updated.name)}, tier ${updated.tier}, permissions ${updated.permissions.join(', ')}; every instance uses it within a second.`,
  );
}
