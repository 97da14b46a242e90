/**
 * `switchyard usage --org O | --all [--since 2026-11-01|30d] [--json]`: per-model totals and cost
 * from the usage ledger, for one organization or every organization, for the operator.
 */
import { parseDuration } from '../accounts/key-service.ts';
import type { Config } from '../config/index.ts';
import { OrganizationsRepository } from '../db/repositories/organizations-repository.ts';
import { UsageLedgerRepository } from '../db/repositories/usage-ledger-repository.ts';
import { openExistingDatabase } from './existing-database.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';

/** `--since` as a date (`2026-11-01`, any ISO date-time) or a duration back from now (`30d`); default: start of this month (UTC). */
export function parseSince(value: string | true | undefined, now: number): number {
  if (value === undefined || value === true) {
    const date = new Date(now);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
  const duration = parseDuration(value);
  if (duration !== undefined) return now - duration;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw new CliUsageError(`--since "${value}" is neither a date (2026-11-01) nor a duration (30d, 12h).`);
  return parsed;
}

const USAGE = 'Usage: switchyard usage --org <organization> | --all [--since 2026-11-01|30d] [--json]';

export async function usageCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const organization = parsed.flags['org'];
  const all = parsed.flags['all'] === true;
  if (typeof organization !== 'string' && !all) throw new CliUsageError(USAGE);
  const since = parseSince(parsed.flags['since'], Date.now());
  const database = await openExistingDatabase(config);
  try {
    if (typeof organization !== 'string') {
      await printAll(new UsageLedgerRepository(database.db), since, parsed.flags['json'] === true, print);
      return;
    }
    if ((await new OrganizationsRepository(database.db).find(organization)) === undefined)
      throw new CliUsageError(`No organization ${organization}. Run switchyard orgs list to see them.`);
    const rows = await new UsageLedgerRepository(database.db).summarize(organization, since);
    if (parsed.flags['json'] === true) {
      print(JSON.stringify({ organization, since: new Date(since).toISOString(), models: rows }));
      return;
    }
    print(`Usage of ${organization} since ${new Date(since).toISOString()}`);
    print('model | requests | input tokens | output tokens | cached | reasoning | cost USD');
    for (const row of rows) {
      print(
        `${row.model} | ${row.requests} | ${row.inputTokens} | ${row.outputTokens} | ${row.cachedTokens} | ${row.reasoningTokens} | ${row.costUsd.toFixed(6)}`,
      );
    }
    const cost = rows.reduce((sum, row) => sum + row.costUsd, 0);
    print(`total | ${rows.reduce((sum, row) => sum + row.requests, 0)} requests | ${cost.toFixed(6)} USD`);
  } finally {
    await database.close();
  }
}

/** `usage --all`: every organization's per-model totals, then each organization's total. */
async function printAll(ledger: UsageLedgerRepository, since: number, json: boolean, print: (text: string) => void): Promise<void> {
  const rows = await ledger.summarizeAll(since);
  if (json) {
    print(JSON.stringify({ since: new Date(since).toISOString(), rows }));
    return;
  }
  print(`Usage of every organization since ${new Date(since).toISOString()}`);
  print('organization | model | requests | input tokens | output tokens | cost USD');
  for (const row of rows) {
    print(`${row.organizationId} | ${row.model} | ${row.requests} | ${row.inputTokens} | ${row.outputTokens} | ${row.costUsd.toFixed(6)}`);
  }
  const cost = rows.reduce((sum, row) => sum + row.costUsd, 0);
  const organizations = new Set(rows.map((row) => row.organizationId)).size;
  print(`total | ${organizations} organizations | ${rows.reduce((sum, row) => sum + row.requests, 0)} requests | ${cost.toFixed(6)} USD`);
}
