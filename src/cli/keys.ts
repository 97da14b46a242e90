/**
 * `switchyard keys create|list|revoke|update`: the operator's key management (SPEC: keys are not created
 * through the interface).
 */
import { KeyRequestError, KeyService, parseDuration } from '../accounts/key-service.ts';
import type { Config } from '../config/index.ts';
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { OwnersRepository } from '../db/repositories/owners-repository.ts';
import { openMigratedDatabase } from '../runtime.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';
import { requireKnownOrganization } from './known-organization.ts';
import { createAccountServices } from '../accounts/account-services.ts';
import { CLI_ACTOR } from '../accounts/organizations.ts';
import { commaList } from './operator-services.ts';

function iso(milliseconds: number | null): string {
  return milliseconds === null ? '-' : new Date(milliseconds).toISOString();
}

export async function keysCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action, ...rest] = parsed.positionals;
  const database = await openMigratedDatabase(config);
  try {
    // Keys are bounded by their organization's plan (accounts/plans.ts).
    const { organizations } = createAccountServices(config, database.db, { info: () => undefined, error: () => undefined });
    const keys = new KeyService(config, new ApiKeysRepository(database.db), Date.now, organizations);
    // What the operator does to an organization's keys shows in that organization's audit log too.
    const owners = new OwnersRepository(database.db);
    const audit = (organizationId: string, action: string, target: string): Promise<void> =>
      owners.appendAudit({ organizationId, actor: 'operator', action, target, address: null, createdAt: Date.now() });
    const json = parsed.flags['json'] === true;
    switch (action) {
      case 'create': {
        const expiresIn = parsed.flags['expires-in'];
        let expiresInMs: number | undefined;
        if (typeof expiresIn === 'string') {
          expiresInMs = parseDuration(expiresIn);
          if (expiresInMs === undefined) throw new CliUsageError(`--expires-in "${expiresIn}" is not a duration; use e.g. 30d, 12h, 90m.`);
        }
        const permissions = parsed.flags['permissions'];
        // A new organization only when asked: a typo in --org must not make one silently.
        if (typeof parsed.flags['org'] === 'string' && parsed.flags['create-org'] !== true) {
          await requireKnownOrganization(
            new ApiKeysRepository(database.db),
            parsed.flags['org'],
            'Add --create-org to create it with this key (`switchyard keys list` shows the organizations of existing keys).',
          );
        }
        const created = await keys.create({
          ...(typeof parsed.flags['org'] === 'string' ? { organization: parsed.flags['org'] } : {}),
          ...(typeof parsed.flags['tier'] === 'string' ? { tier: parsed.flags['tier'] } : {}),
          ...(typeof permissions === 'string'
            ? {
                permissions: permissions
                  .split(',')
                  .map((name) => name.trim())
                  .filter(Boolean),
              }
            : {}),
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
        } else {
          print(`Created key ${record.id} (organization ${record.organizationId}, tier ${record.tier}, expires ${iso(record.expiresAt)}).`);
          print(`Permissions: ${record.permissions.join(', ')}`);
          print('The key is shown only this once:');
          print(created.key);
        }
        return;
      }
      case 'list': {
        const records = await keys.list(typeof parsed.flags['org'] === 'string' ? parsed.flags['org'] : undefined);
        if (json) {
          print(JSON.stringify(records));
          return;
        }
        for (const record of records) {
          const state =
            record.revokedAt !== null ? 'revoked' : record.expiresAt !== null && record.expiresAt <= Date.now() ? 'expired' : 'active';
          print(
            `${record.id}  ${record.redacted}  ${record.organizationId}  ${record.tier}  ${state}  created ${iso(record.createdAt)}  expires ${iso(record.expiresAt)}`,
          );
        }
        if (records.length === 0) print('No keys.');
        return;
      }
      case 'revoke': {
        const id = rest[0];
        if (id === undefined) throw new CliUsageError('Usage: switchyard keys revoke <key id>');
        if (!(await keys.revoke(id))) throw new CliUsageError(`No active key with id ${id}.`);
        await audit((await keys.findById(id))!.organizationId, 'key.revoked', id);
        print(`Revoked ${id}.`);
        return;
      }
      case 'update': {
        const id = rest[0];
        const tier = parsed.flags['tier'];
        const permissions = parsed.flags['permissions'];
        const name = parsed.flags['name'];
        if (id === undefined || (typeof tier !== 'string' && typeof permissions !== 'string' && typeof name !== 'string'))
          throw new CliUsageError('Usage: switchyard keys update <key id> [--tier T] [--permissions a,b] [--name N]');
        const updated = await keys.update(id, {
          ...(typeof tier === 'string' ? { tier } : {}),
          ...(typeof permissions === 'string' ? { permissions: commaList(permissions) } : {}),
          ...(typeof name === 'string' ? { name } : {}),
        });
        await audit(updated.organizationId, 'key.updated', id);
        await organizations.audit(CLI_ACTOR, 'key.updated', updated.organizationId, id, {
          tier: updated.tier,
          permissions: updated.permissions,
        });
        print(
          `Updated ${id}: tier ${updated.tier}, permissions ${updated.permissions.join(', ')}; every instance uses it within a second.`,
        );
        return;
      }
      default:
        throw new CliUsageError('Usage: switchyard keys create|list|revoke|update ...');
    }
  } catch (error) {
    if (error instanceof KeyRequestError) throw new CliUsageError(error.message);
    throw error;
  } finally {
    await database.close();
  }
}
