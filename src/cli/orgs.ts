/**
 * `switchyard orgs list|show|set-plan|suspend|resume` and `switchyard operators create`: the
 * operator's organization commands beside the console's pages (same services, same operators' audit
 * log, actor `cli`). Every change reaches every instance within a second (the key cache polls
 * `keys_version`, which these writes bump).
 */
import { CLI_ACTOR } from '../accounts/organizations.ts';
import type { Config } from '../config/index.ts';
import { requireExistingDatabase } from './existing-database.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';
import { linkBaseNote, linkBaseUrl, withOperatorServices } from './operator-services.ts';
import { StorageQuotaRepository } from '../db/repositories/storage-quota-repository.ts';

const USAGE = `Usage: switchyard orgs list [--search S] [--json]
       switchyard orgs show <organization> [--json]
       switchyard orgs set-plan <organization> --plan <tier> [--overrides '{"maxRequestsPerBatch":60000}' | --clear-overrides]
       switchyard orgs suspend|resume <organization>`;

function overridesFlag(parsed: ParsedArguments): unknown {
  if (parsed.flags['clear-overrides'] === true) return null;
  const text = parsed.flags['overrides'];
  if (text === undefined) return undefined;
  if (text === true) throw new CliUsageError('--overrides takes a JSON object, e.g. --overrides \'{"tokensPerDay":5000000}\'.');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CliUsageError(`--overrides is not JSON: ${text}`);
  }
}

export async function orgsCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action, id] = parsed.positionals;
  const json = parsed.flags['json'] === true;
  if (action === 'list' || action === 'show') requireExistingDatabase(config);
  await withOperatorServices(config, async (services) => {
    const { organizations, people } = services;
    switch (action) {
      case 'list': {
        const search = parsed.flags['search'];
        const rows = await organizations.list(typeof search === 'string' ? search : undefined);
        if (json) {
          print(JSON.stringify(rows));
          return;
        }
        print(
          'organization | plan | status | members | active keys | tokens today | tokens this month | cost this month USD | last active day',
        );
        for (const row of rows) {
          print(
            [
              row.id,
              `${row.effective.tier}${row.effective.custom ? ' (custom)' : ''}`,
              row.status,
              row.members,
              row.activeKeys,
              row.today.tokens,
              row.month.tokens,
              row.month.costUsd.toFixed(4),
              row.lastActiveDay === null ? '-' : new Date(row.lastActiveDay).toISOString().slice(0, 10),
            ].join(' | '),
          );
        }
        if (rows.length === 0) print('No organizations.');
        return;
      }
      case 'show': {
        if (id === undefined) throw new CliUsageError(USAGE);
        const organization = await organizations.get(id);
        const members = await people.list(id);
        if (json) {
          print(JSON.stringify({ ...organization, people: members }));
          return;
        }
        const plan = organization.effective;
        print(`${organization.id}: ${organization.status}, plan ${plan.tier}${plan.custom ? ' (custom)' : ''}`);
        print(
          `  rpm ${plan.requestsPerMinute}, tpm ${plan.tokensPerMinute}, tokens/day ${plan.tokensPerDay}, tokens/month ${plan.tokensPerMonth} (0: unlimited)`,
        );
        print(`  concurrent batches ${plan.concurrentBatches}, requests per batch ${plan.maxRequestsPerBatch}`);
        const [keys, storage] = await Promise.all([
          services.keys.allowance(id),
          new StorageQuotaRepository(services.database.db).figures(id, Date.now()),
        ]);
        print(
          `  active keys ${keys.active} of ${plan.maxActiveKeys || 'unlimited'}, stored bytes ${storage.storedBytes} of ${plan.storageQuotaBytes || 'unlimited'}`,
        );
        print(`  permissions: ${plan.permissions.join(', ')}`);
        if (organization.overrides !== null) print(`  overrides: ${JSON.stringify(organization.overrides)}`);
        for (const person of members) print(`  ${person.role} ${person.email}${person.passwordSet ? '' : ' (no password yet)'}`);
        return;
      }
      case 'set-plan': {
        const plan = parsed.flags['plan'];
        if (id === undefined || typeof plan !== 'string') throw new CliUsageError(USAGE);
        const result = await organizations.setPlan(id, plan, overridesFlag(parsed), CLI_ACTOR);
        print(
          `${id} is on the ${result.plan.tier} plan${result.plan.custom ? ' with overrides' : ''}; ${result.narrowedKeys} key(s) narrowed to fit it.`,
        );
        return;
      }
      case 'suspend':
      case 'resume': {
        if (id === undefined) throw new CliUsageError(USAGE);
        if (action === 'suspend') await organizations.suspend(id, CLI_ACTOR);
        else await organizations.resume(id, CLI_ACTOR);
        print(
          action === 'suspend'
            ? `Suspended ${id}: its keys answer 403 and its batches pause, on every instance within a second.`
            : `Reactivated ${id}.`,
        );
        return;
      }
      default:
        throw new CliUsageError(USAGE);
    }
  });
}

/** `switchyard operators create --email E [--base-url URL]`: an operator account and its set-password link. */
export async function operatorsCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action] = parsed.positionals;
  const email = parsed.flags['email'];
  if (action !== 'create' || typeof email !== 'string')
    throw new CliUsageError('Usage: switchyard operators create --email <email> [--base-url URL]');
  await withOperatorServices(config, async ({ people, organizations }) => {
    const issued = await people.createOperator(email, linkBaseUrl(config, parsed));
    await organizations.audit(CLI_ACTOR, 'operator.created', null, issued.person.email, null);
    print(`Created operator ${issued.person.email}.`);
    print(`One-time sign-in link to set the password (valid 24 hours${issued.delivery === 'sent' ? ', also mailed' : ''}):`);
    print(issued.link);
    const note = linkBaseNote(config, parsed);
    if (note !== undefined) print(note);
  });
}
