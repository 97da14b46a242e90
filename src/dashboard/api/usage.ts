/**
 * The usage page's figures (usage-report.ts) with the usage per key, the organization's plan and the
 * rule the limits follow, and their CSV export, for the session's organization.
 */
import type { FastifyPluginAsync } from 'fastify';
import { keyLimits, type EffectivePlan } from '../../accounts/plans.ts';
import { ownTier, type Config } from '../../config/index.ts';
import type { ApiKeyRecord } from '../../db/repositories/api-keys-repository.ts';
import type { KeyUsageRow } from '../../db/repositories/usage-rollups-repository.ts';
import { parseUsageRange, usageCsv, usageReport } from '../usage-report.ts';
import { access, signedIn, type DashboardApiDependencies } from './common.ts';
import { planObject } from './operator-organizations.ts';
import { PlanBounds } from './plan-bounds.ts';
import type { KeyUsage, UsageReport } from './wire.ts';

type RangeQuery = { Querystring: Record<string, string | undefined> };

/**
 * The one rule the limits follow (accounts/plans.ts, enforced by limits/ with each key's `keyLimits`):
 * stated on the usage page and in `/dashboard/api/organization`.
 */
export const LIMITS_RULE =
  "Day and month token quotas, concurrent batches and requests per batch are the organization's plan, shared by all its keys; per-minute limits are each key's tier, never above the plan.";

function keyUsage(rows: KeyUsageRow[], keys: ApiKeyRecord[], config: Config, plan: EffectivePlan | undefined): KeyUsage[] {
  const byId = new Map(keys.map((key) => [key.id, key]));
  return rows.map((row) => {
    const key = byId.get(row.keyId);
    // Without a plan yet, a key's own tier stands for the plan (accounts/account-services.ts planLimitsOf).
    const limits = key === undefined || plan === undefined ? undefined : keyLimits(config, key.tier, plan);
    const tier = key === undefined ? undefined : ownTier(config.tiers, key.tier);
    return {
      key_id: row.keyId,
      name: key?.name ?? null,
      prefix: key?.redacted ?? null,
      requests: row.requests,
      input_tokens: row.inputTokens,
      output_tokens: row.outputTokens,
      cost_usd: row.costUsd,
      requests_per_minute: limits?.requestsPerMinute ?? tier?.requestsPerMinute ?? null,
      tokens_per_minute: limits?.tokensPerMinute ?? tier?.tokensPerMinute ?? null,
    };
  });
}

export const usageApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, dependencies) => {
  const { config, rollups, usage, keys } = dependencies;
  const bounds = new PlanBounds(dependencies);

  app.get<RangeQuery>('/dashboard/api/usage', access('member'), async (request): Promise<UsageReport> => {
    const { organizationId } = signedIn(request).owner;
    const range = parseUsageRange(request.query, Date.now());
    // One rule (accounts/plans.ts): the day and month limits are the organization's plan.
    const plan = await bounds.planOf(organizationId);
    const [report, perKey, keyRecords] = await Promise.all([
      usageReport({
        rollups,
        usage,
        organizationId,
        tier: plan?.tier ?? (await bounds.allowedTiers(organizationId))[0] ?? config.defaultTier,
        ...(plan === undefined ? {} : { limits: keyLimits(config, plan.tier, plan) }),
        range,
      }),
      rollups.byKey(organizationId, range.fromDayStart, range.toDayStart),
      keys.list(organizationId),
    ]);
    return {
      ...report,
      object: 'dashboard.usage',
      by_key: keyUsage(perKey, keyRecords, config, plan),
      plan: plan === undefined ? null : planObject(plan),
      limits_rule: LIMITS_RULE,
    };
  });

  app.get<RangeQuery>('/dashboard/api/usage.csv', access('member'), async (request, reply) => {
    const { organizationId } = signedIn(request).owner;
    const range = parseUsageRange(request.query, Date.now());
    const rows = await rollups.daily(organizationId, range.fromDayStart, range.toDayStart);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="usage-${range.from}-${range.to}.csv"`)
      .send(usageCsv(rows));
  });
};
