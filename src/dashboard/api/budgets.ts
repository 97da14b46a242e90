/**
 * Money budgets in the dashboard (issue 37 item 4; services/budgets/). Owners and members:
 * `GET /dashboard/api/budgets`, the organization's budget and every key's with spend, remaining and
 * reset. Owners: `PUT|DELETE /dashboard/api/budgets/keys/:id` (never above the organization's budget:
 * 400 naming it). Operators: `GET /dashboard/api/operator/budgets` (every organization's budget and
 * spend) and `PUT|DELETE /dashboard/api/operator/organizations/:id/budget` (the override of its plan's).
 * Amounts are integer micro-USD; spend is the ledger's settled spend of the current period (as the
 * CLI shows). Every change lands in the organization's or the operators' audit log.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BUDGET_PERIODS } from '../../config/index.ts';
import { notFound } from '../../core/service-error.ts';
import type { ApiKeyRecord } from '../../db/repositories/api-keys-repository.ts';
import type { BudgetAmount, BudgetService } from '../../services/budgets/budget-service.ts';
import { budgetWindow } from '../../services/budgets/budget-periods.ts';
import { formatUsd } from '../../services/budgets/budget-view.ts';
import { access, parseBody, signedIn, type DashboardApiDependencies, type WithOperator } from './common.ts';
import { keyObject } from './keys.ts';
import { PlanBounds } from './plan-bounds.ts';
import type { BudgetFiguresObject, BudgetsOverview, KeyBudgetObject, OrganizationBudgetObject } from './wire.ts';

/** A budget as set from the dashboard: a known period and a positive whole number of micro-USD. */
const budgetBody = z.object({
  period: z.enum(BUDGET_PERIODS),
  amount_micro_usd: z.number().int().positive().max(1e15),
});

type WithBudgets = DashboardApiDependencies & { budgets: BudgetService };
type ById = { Params: { id: string } };

const amountOf = (body: unknown): BudgetAmount => {
  const parsed = parseBody(budgetBody, body);
  return { period: parsed.period, amountMicroUsd: parsed.amount_micro_usd };
};

async function figures(
  budgets: BudgetService,
  organizationId: string,
  keyId: string | null,
  amount: BudgetAmount,
): Promise<BudgetFiguresObject> {
  const spent = await budgets.spentInPeriod(organizationId, keyId, amount.period);
  const end = budgetWindow(amount.period, Date.now()).endMs;
  return {
    period: amount.period,
    limit_micro_usd: amount.amountMicroUsd,
    spent_micro_usd: spent,
    remaining_micro_usd: Math.max(0, amount.amountMicroUsd - spent),
    reset_at: end === null ? null : new Date(end).toISOString(),
  };
}

async function organizationBudget(dependencies: WithBudgets, organizationId: string, plan: string): Promise<OrganizationBudgetObject> {
  const { budgets, config } = dependencies;
  const { organization } = await budgets.ofOrganization(organizationId, plan);
  const fromPlan = config.tiers[plan]?.budget ?? null;
  return {
    object: 'organization.budget',
    organization: organizationId,
    plan,
    source: organization?.source ?? 'none',
    plan_budget: fromPlan === null ? null : { period: fromPlan.period, limit_micro_usd: Math.round(fromPlan.amountUsd * 1_000_000) },
    ...(organization === null ? {} : await figures(budgets, organizationId, null, organization)),
  };
}

/** The organization's plan name (the tier its budget comes from); the default tier when plans are off. */
async function planNameOf(dependencies: WithBudgets, organizationId: string): Promise<string> {
  const plan = await new PlanBounds(dependencies).planOf(organizationId);
  return plan?.tier ?? dependencies.config.defaultTier;
}

/** The key `id` of the organization, or 404 (another organization's key is not there). */
async function keyOf(dependencies: WithBudgets, organizationId: string, id: string): Promise<ApiKeyRecord> {
  const record = await dependencies.keys.findById(id);
  if (record === undefined || record.organizationId !== organizationId)
    throw notFound('not_found', `No API key ${id} in this organization.`);
  return record;
}

export const budgetsApi: FastifyPluginAsync<WithBudgets> = async (app, dependencies) => {
  const { budgets, keys, accounts } = dependencies;
  const organizationOf = (request: FastifyRequest) => signedIn(request).owner.organizationId;

  app.get('/dashboard/api/budgets', access('member'), async (request): Promise<BudgetsOverview> => {
    const organizationId = organizationOf(request);
    const plan = await planNameOf(dependencies, organizationId);
    const [organization, shown, records] = await Promise.all([
      organizationBudget(dependencies, organizationId, plan),
      budgets.ofOrganization(organizationId, plan),
      keys.list(organizationId),
    ]);
    const byKey = new Map(shown.keys.map((row) => [row.keyId, row]));
    const now = Date.now();
    const keyRows: KeyBudgetObject[] = await Promise.all(
      records.reverse().map(async (record) => {
        const row = byKey.get(record.id);
        const view = keyObject(record, undefined, now);
        return {
          object: 'key.budget',
          key: record.id,
          name: record.name,
          prefix: record.redacted,
          status: view.status,
          budget: row === undefined ? null : await figures(budgets, organizationId, record.id, row),
        };
      }),
    );
    return { object: 'budgets', organization, keys: keyRows, periods: [...BUDGET_PERIODS] };
  });

  app.put<ById>('/dashboard/api/budgets/keys/:id', access('owner'), async (request) => {
    const { owner } = signedIn(request);
    const record = await keyOf(dependencies, owner.organizationId, request.params.id);
    const amount = amountOf(request.body);
    await budgets.setKeyBudget(owner.organizationId, await planNameOf(dependencies, owner.organizationId), record.id, amount, owner.email);
    await accounts.audit(owner, 'budget.set', `${record.id}: ${formatUsd(amount.amountMicroUsd)} per ${amount.period}`, request.ip);
    return { object: 'key.budget', key: record.id, budget: await figures(budgets, owner.organizationId, record.id, amount) };
  });

  app.delete<ById>('/dashboard/api/budgets/keys/:id', access('owner'), async (request) => {
    const { owner } = signedIn(request);
    const record = await keyOf(dependencies, owner.organizationId, request.params.id);
    await budgets.setKeyBudget(owner.organizationId, await planNameOf(dependencies, owner.organizationId), record.id, null, owner.email);
    await accounts.audit(owner, 'budget.cleared', record.id, request.ip);
    return { object: 'key.budget', key: record.id, budget: null };
  });
};

export const operatorBudgetsApi: FastifyPluginAsync<WithOperator & { budgets: BudgetService }> = async (app, dependencies) => {
  const { budgets, operator } = dependencies;
  const operatorOnly = access('operator');
  const actor = (request: FastifyRequest) => ({ email: signedIn(request).owner.email, address: request.ip });

  app.get('/dashboard/api/operator/budgets', operatorOnly, async () => {
    const rows = await operator.organizations.list();
    return {
      object: 'list',
      data: await Promise.all(rows.map((row) => organizationBudget(dependencies, row.id, row.effective.tier))),
      periods: [...BUDGET_PERIODS],
    };
  });

  app.put<ById>('/dashboard/api/operator/organizations/:id/budget', operatorOnly, async (request) => {
    const organization = await operator.organizations.get(request.params.id);
    const amount = amountOf(request.body);
    await budgets.setOrganizationBudget(organization.id, amount, actor(request).email);
    await operator.organizations.audit(actor(request), 'budget.set', organization.id, null, amount);
    return organizationBudget(dependencies, organization.id, organization.effective.tier);
  });

  app.delete<ById>('/dashboard/api/operator/organizations/:id/budget', operatorOnly, async (request) => {
    const organization = await operator.organizations.get(request.params.id);
    await budgets.setOrganizationBudget(organization.id, null, actor(request).email);
    await operator.organizations.audit(actor(request), 'budget.cleared', organization.id, null, null);
    return organizationBudget(dependencies, organization.id, organization.effective.tier);
  });
};
