/**
 * `switchyard budgets list|show|set|clear`: money budgets (services/budgets/). Operators set an
 * organization's budget (an override of its plan's); a key budget set here is held to the same rule
 * as the owners' dashboard (never above the organization's). Amounts are given in USD (`--usd 1.50`,
 * at most 6 decimals) and stored in integer micro-USD; spend is the ledger's for the current period.
 */
import { CLI_ACTOR } from '../accounts/organizations.ts';
import { BUDGET_PERIODS, type Config } from '../config/index.ts';
import { BudgetsRepository } from '../db/repositories/budgets-repository.ts';
import { BudgetService, checkBudgetAmount, planBudget, type BudgetAmount } from '../services/budgets/budget-service.ts';
import { budgetWindow } from '../services/budgets/budget-periods.ts';
import { formatUsd } from '../services/budgets/budget-view.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';
import { withOperatorServices } from './operator-services.ts';

const USAGE = `Usage: switchyard budgets list [--json]
       switchyard budgets show --org O [--json]
       switchyard budgets set --org O [--key K] --period ${BUDGET_PERIODS.join('|')} --usd AMOUNT
       switchyard budgets clear --org O [--key K]`;

function flagText(parsed: ParsedArguments, name: string): string | undefined {
  const value = parsed.flags[name];
  if (value === true) throw new CliUsageError(`--${name} takes a value.\n\n${USAGE}`);
  return value;
}

/** `1.5` -> 1500000: exact decimal parsing, at most 6 decimals. */
export function parseUsd(text: string): number {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (match === null) throw new CliUsageError(`--usd takes an amount in USD with at most 6 decimals, e.g. 1.50 (got "${text}").`);
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}

const resetText = (period: BudgetAmount['period']) => {
  const end = budgetWindow(period, Date.now()).endMs;
  return end === null ? 'never' : new Date(end).toISOString();
};

export async function budgetsCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action] = parsed.positionals;
  const json = parsed.flags['json'] === true;
  await withOperatorServices(config, async ({ organizations, database }) => {
    const budgets = new BudgetService(config, new BudgetsRepository(database.db));
    const organizationFlag = (): string => {
      const id = flagText(parsed, 'org');
      if (id === undefined) throw new CliUsageError(`--org is required.\n\n${USAGE}`);
      return id;
    };
    switch (action) {
      case 'list': {
        const rows = [];
        for (const organization of await organizations.list()) {
          const { organization: budget } = await budgets.ofOrganization(organization.id, organization.effective.tier);
          const spent = budget === null ? null : await budgets.spentInPeriod(organization.id, null, budget.period);
          rows.push({ organization: organization.id, plan: organization.effective.tier, budget, spentMicroUsd: spent });
        }
        if (json) return print(JSON.stringify(rows));
        print('organization | plan | budget | period | source | spent | reset');
        for (const row of rows)
          print(
            row.budget === null
              ? [row.organization, row.plan, 'none', '-', '-', '-', '-'].join(' | ')
              : [
                  row.organization,
                  row.plan,
                  formatUsd(row.budget.amountMicroUsd),
                  row.budget.period,
                  row.budget.source,
                  formatUsd(row.spentMicroUsd ?? 0),
                  resetText(row.budget.period),
                ].join(' | '),
          );
        return;
      }
      case 'show': {
        const id = organizationFlag();
        const organization = await organizations.get(id);
        const shown = await budgets.ofOrganization(id, organization.effective.tier);
        const spent = shown.organization === null ? null : await budgets.spentInPeriod(id, null, shown.organization.period);
        const keys = await Promise.all(
          shown.keys.map(async (row) => ({ ...row, spentMicroUsd: await budgets.spentInPeriod(id, row.keyId, row.period) })),
        );
        if (json) return print(JSON.stringify({ organization: shown.organization, spentMicroUsd: spent, keys }));
        print(
          shown.organization === null
            ? `${id}: no budget (plan ${organization.effective.tier} has none)`
            : `${id}: ${formatUsd(shown.organization.amountMicroUsd)} per ${shown.organization.period} (${shown.organization.source}), spent ${formatUsd(spent ?? 0)}, resets ${resetText(shown.organization.period)}`,
        );
        for (const key of keys)
          print(
            `  key ${key.keyId}: ${formatUsd(key.amountMicroUsd)} per ${key.period}, spent ${formatUsd(key.spentMicroUsd)}, resets ${resetText(key.period)}`,
          );
        return;
      }
      case 'set':
      case 'clear': {
        const id = organizationFlag();
        const organization = await organizations.get(id);
        const keyId = flagText(parsed, 'key');
        let amount: BudgetAmount | null = null;
        if (action === 'set') {
          const usd = flagText(parsed, 'usd');
          if (usd === undefined) throw new CliUsageError(`--usd is required.\n\n${USAGE}`);
          amount = checkBudgetAmount({ period: flagText(parsed, 'period'), amountMicroUsd: parseUsd(usd) });
        }
        if (keyId === undefined) await budgets.setOrganizationBudget(id, amount, 'cli');
        else await budgets.setKeyBudget(id, organization.effective.tier, keyId, amount, 'cli');
        await organizations.audit(CLI_ACTOR, amount === null ? 'budget.cleared' : 'budget.set', id, keyId ?? null, amount ?? {});
        const plan = planBudget(config, organization.effective.tier);
        print(
          amount === null
            ? `Budget of ${keyId === undefined ? id : `key ${keyId}`} cleared${keyId === undefined && plan !== null ? ` (the plan's ${formatUsd(plan.amountMicroUsd)} per ${plan.period} applies)` : ''}.`
            : `Budget of ${keyId === undefined ? id : `key ${keyId}`} set: ${formatUsd(amount.amountMicroUsd)} per ${amount.period}. Running instances see it within 5 seconds.`,
        );
        return;
      }
      default:
        throw new CliUsageError(USAGE);
    }
  });
}
