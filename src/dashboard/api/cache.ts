/**
 * The response cache in the dashboard (README "Response cache"): what it saved the session's
 * organization (requests answered from the cache, tokens, money) over the usage page's range; the purge
 * of the organization's entries, by its owners (audited as `cache.purged`) and by operators for any
 * organization.
 */
import type { FastifyPluginAsync } from 'fastify';
import { MICRO_USD_PER_USD } from '../../services/metering/price-card.ts';
import { parseUsageRange } from '../usage-report.ts';
import { access, signedIn, type DashboardApiDependencies, type ResponseCacheAdmin } from './common.ts';

type RangeQuery = { Querystring: Record<string, string | undefined> };
const DAY_MS = 86_400_000;

export const cacheApi: FastifyPluginAsync<DashboardApiDependencies & { responseCache: ResponseCacheAdmin }> = async (app, dependencies) => {
  const { responseCache, accounts } = dependencies;

  app.get<RangeQuery>('/dashboard/api/cache/savings', access('member'), async (request) => {
    const { organizationId } = signedIn(request).owner;
    const range = parseUsageRange(request.query, Date.now());
    const savings = await responseCache.savings(organizationId, range.fromDayStart, range.toDayStart + DAY_MS);
    return {
      object: 'dashboard.cache_savings',
      requests: savings.hits,
      saved_tokens: savings.savedTokens,
      saved_usd: savings.savedMicroUsd / MICRO_USD_PER_USD,
    };
  });

  app.post('/dashboard/api/cache/purge', access('owner'), async (request) => {
    const { owner } = signedIn(request);
    const purged = await responseCache.purge(owner.organizationId);
    await accounts.audit(owner, 'cache.purged', String(purged), request.ip);
    return { object: 'cache.purge', organization_id: owner.organizationId, purged };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/operator/organizations/:id/cache/purge', access('operator'), async (request) => {
    const purged = await responseCache.purge(request.params.id);
    await dependencies.operator?.operatorAudit.append({
      actor: signedIn(request).owner.email,
      action: 'cache.purged',
      organizationId: request.params.id,
      target: null,
      detail: JSON.stringify({ purged }),
      address: request.ip,
      createdAt: Date.now(),
    });
    return { object: 'cache.purge', organization_id: request.params.id, purged };
  });
};
