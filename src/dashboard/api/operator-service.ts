/**
 * The operator console's service-wide resources (operators only): plans (the configured tiers with how
 * many organizations are on each), fleet (instances alive from their heartbeat rows, routed
 * deployments) and the operators' audit log, paged back with `before`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { HEARTBEAT_INTERVAL_MS } from '../../services/instances/instance-heartbeat.ts';
import { invalidParameter } from '../../core/service-error.ts';
import { deploymentRows } from '../../services/generation/routing/deployment-report.ts';
import { deploymentTable } from '../../services/generation/routing/deployment-table.ts';
import { access, type WithOperator } from './common.ts';

const auditQuery = z.object({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  organization: z.string().max(100).optional(),
});

const operatorOnly = access('operator');

export const operatorServiceApi: FastifyPluginAsync<WithOperator> = async (app, { operator, config }) => {
  const routes = deploymentTable(config);

  app.get('/dashboard/api/operator/plans', operatorOnly, async () => {
    const counts = await operator.organizations.countsByPlan();
    return {
      object: 'list',
      default_tier: config.defaultTier,
      data: Object.entries(config.tiers).map(([name, tier]) => ({
        name,
        requests_per_minute: tier.requestsPerMinute,
        tokens_per_minute: tier.tokensPerMinute,
        tokens_per_day: tier.tokensPerDay,
        tokens_per_month: tier.tokensPerMonth,
        concurrent_batches: tier.concurrentBatches,
        max_requests_per_batch: tier.maxRequestsPerBatch,
        max_active_keys: tier.maxActiveKeys,
        storage_quota_bytes: tier.storageQuotaBytes,
        permissions: tier.permissions,
        organizations: counts.get(name) ?? 0,
      })),
    };
  });

  app.get('/dashboard/api/operator/fleet', operatorOnly, async () => {
    const now = Date.now();
    const [instances, deployments] = await Promise.all([
      operator.instances.live(now - 3 * HEARTBEAT_INTERVAL_MS),
      deploymentRows(routes, operator.deploymentState, now),
    ]);
    return {
      object: 'fleet',
      instances: instances.map((instance) => ({
        id: instance.id,
        version: instance.version,
        started_at: instance.startedAt,
        last_seen_at: instance.lastSeenAt,
      })),
      shared_routing_state: config.limitsBackend === 'redis',
      deployments,
    };
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/dashboard/api/operator/audit', operatorOnly, async (request) => {
    const parsed = auditQuery.safeParse(request.query);
    if (!parsed.success) throw invalidParameter(String(parsed.error.issues[0]!.path[0] ?? 'query'), parsed.error.issues[0]!.message);
    const { before, limit, organization } = parsed.data;
    const entries = await operator.operatorAudit.list({
      limit: limit + 1,
      ...(before === undefined ? {} : { beforeId: before }),
      ...(organization === undefined ? {} : { organizationId: organization }),
    });
    return {
      object: 'list',
      has_more: entries.length > limit,
      data: entries.slice(0, limit).map((entry) => ({
        id: entry.id,
        actor: entry.actor,
        action: entry.action,
        organization: entry.organizationId,
        target: entry.target,
        detail: entry.detail === null ? null : (JSON.parse(entry.detail) as unknown),
        address: entry.address,
        created_at: entry.createdAt,
      })),
    };
  });
};
