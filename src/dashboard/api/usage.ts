/**
 * The usage page's figures (usage-report.ts) and their CSV export, for the session's organization.
 */
import type { FastifyPluginAsync } from 'fastify';
import { keyLimits } from '../../accounts/plans.ts';
import { parseUsageRange, usageCsv, usageReport } from '../usage-report.ts';
import { access, signedIn, type DashboardApiDependencies } from './common.ts';
import { PlanBounds } from './plan-bounds.ts';

type RangeQuery = { Querystring: Record<string, string | undefined> };

export const usageApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, dependencies) => {
  const { config, rollups, usage } = dependencies;
  const bounds = new PlanBounds(dependencies);

  app.get<RangeQuery>('/dashboard/api/usage', access('member'), async (request) => {
    const { organizationId } = signedIn(request).owner;
    const range = parseUsageRange(request.query, Date.now());
    // One rule (accounts/plans.ts): the day and month limits are the organization's plan.
    const plan = await bounds.planOf(organizationId);
    return usageReport({
      rollups,
      usage,
      organizationId,
      tier: plan?.tier ?? (await bounds.allowedTiers(organizationId))[0] ?? config.defaultTier,
      ...(plan === undefined ? {} : { limits: keyLimits(config, plan.tier, plan) }),
      range,
    });
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
