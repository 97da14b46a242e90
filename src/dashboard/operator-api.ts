/**
 * The operator console's JSON API under /dashboard/api/operator: the same sign-in, session cookie,
 * TOTP and CSRF rules as the owners' API (dashboard-api.ts runs the session hook), open to operators
 * only. Organizations (list and search, one organization with its people and keys, plan and overrides,
 * suspend and reactivate, a set-password link for one of its people), plans (the configured tiers with
 * how many organizations are on each), fleet (instances alive, routed deployments) and the operators'
 * audit log. Every change lands in that log with the operator's email and address.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { KeyService } from '../accounts/key-service.ts';
import type { OperatorActor, OrganizationService } from '../accounts/organizations.ts';
import type { OwnerAccounts } from '../accounts/owner-accounts.ts';
import type { PeopleService } from '../accounts/people.ts';
import { allowedKeyTiers, type EffectivePlan } from '../accounts/plans.ts';
import type { Config } from '../config/index.ts';
import { invalidParameter } from '../core/service-error.ts';
import type { InstancesRepository } from '../db/repositories/instances-repository.ts';
import type { OperatorAuditRepository } from '../db/repositories/operator-audit-repository.ts';
import type { DeploymentStateStore } from '../limits/deployment-state.ts';
import { deploymentRows } from '../services/generation/routing/deployment-report.ts';
import { deploymentTable } from '../services/generation/routing/deployment-table.ts';
import { HEARTBEAT_INTERVAL_MS } from '../services/instances/instance-heartbeat.ts';
import { parseBody } from './dashboard-api.ts';

export interface OperatorApiDependencies {
  organizations: OrganizationService;
  operatorAudit: OperatorAuditRepository;
  /** The instances' heartbeat rows (the fleet page). */
  instances: Pick<InstancesRepository, 'live'>;
  people: PeopleService;
  /** The routing state the router uses (shared through Redis when set): the fleet page's deployments. */
  deploymentState: DeploymentStateStore;
}

const planBody = z.object({
  plan: z.string().min(1).max(100),
  /** Per-organization figures; null clears them, absent keeps them. */
  overrides: z.record(z.string(), z.unknown()).nullable().optional(),
});
const auditQuery = z.object({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  organization: z.string().max(100).optional(),
});

export function planObject(plan: EffectivePlan): Record<string, unknown> {
  return {
    tier: plan.tier,
    custom: plan.custom,
    requests_per_minute: plan.requestsPerMinute,
    tokens_per_minute: plan.tokensPerMinute,
    tokens_per_day: plan.tokensPerDay,
    tokens_per_month: plan.tokensPerMonth,
    concurrent_batches: plan.concurrentBatches,
    max_requests_per_batch: plan.maxRequestsPerBatch,
    permissions: plan.permissions,
  };
}

export function registerOperatorApi(
  app: FastifyInstance,
  dependencies: OperatorApiDependencies & { config: Config; accounts: OwnerAccounts; keys: KeyService },
): void {
  const { organizations, people, config, keys } = dependencies;
  const route = { config: { dashboardAccess: 'operator' as const } };
  const actor = (request: FastifyRequest): OperatorActor => ({ email: request.dashboard!.owner.email, address: request.ip });
  const routes = deploymentTable(config);

  app.get<{ Querystring: { search?: string } }>('/dashboard/api/operator/organizations', route, async (request) => {
    const rows = await organizations.list(typeof request.query.search === 'string' ? request.query.search.slice(0, 200) : undefined);
    return {
      object: 'list',
      data: rows.map((row) => ({
        id: row.id,
        plan: row.effective.tier,
        custom: row.effective.custom,
        status: row.status,
        members: row.members,
        active_keys: row.activeKeys,
        today: { requests: row.today.requests, tokens: row.today.tokens, cost_usd: row.today.costUsd },
        month: { requests: row.month.requests, tokens: row.month.tokens, cost_usd: row.month.costUsd },
        last_active_day: row.lastActiveDay,
        created_at: row.createdAt,
      })),
    };
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/operator/organizations/:id', route, async (request) => {
    const organization = await organizations.get(request.params.id);
    const [members, keyRecords] = await Promise.all([people.list(organization.id), keys.list(organization.id)]);
    const now = Date.now();
    return {
      object: 'organization',
      id: organization.id,
      status: organization.status,
      suspended_at: organization.suspendedAt,
      created_at: organization.createdAt,
      plan: planObject(organization.effective),
      overrides: organization.overrides,
      allowed_key_tiers: allowedKeyTiers(config, organization.effective),
      tiers: Object.keys(config.tiers),
      people: members.map((person) => ({
        id: person.id,
        email: person.email,
        role: person.role,
        password_set: person.passwordSet,
        totp_enabled: person.totpEnabled,
        last_seen_at: person.lastSeenAt,
      })),
      keys: keyRecords.reverse().map((key) => ({
        id: key.id,
        name: key.name,
        prefix: key.redacted,
        tier: key.tier,
        permissions: key.permissions,
        status: key.revokedAt !== null ? 'revoked' : key.expiresAt !== null && key.expiresAt <= now ? 'expired' : 'active',
      })),
    };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/operator/organizations/:id/plan', route, async (request) => {
    const body = parseBody(planBody, request.body);
    const result = await organizations.setPlan(request.params.id, body.plan, body.overrides, actor(request));
    return { object: 'organization.plan', id: request.params.id, plan: planObject(result.plan), narrowed_keys: result.narrowedKeys };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/operator/organizations/:id/suspend', route, async (request) => {
    await organizations.suspend(request.params.id, actor(request));
    return { object: 'organization.status', id: request.params.id, status: 'suspended' };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/operator/organizations/:id/resume', route, async (request) => {
    await organizations.resume(request.params.id, actor(request));
    return { object: 'organization.status', id: request.params.id, status: 'active' };
  });

  app.post<{ Params: { id: string; person: string } }>(
    '/dashboard/api/operator/organizations/:id/people/:person/reset-link',
    route,
    async (request) => {
      const person = await people.find(request.params.id, request.params.person);
      const issued = await people.resetLink(person, request.publicOrigin());
      await organizations.audit(actor(request), 'owner.link_issued', person.organizationId, person.email, { delivery: issued.delivery });
      // The link is shown to the operator only when no mail left (they pass it on by hand).
      return {
        object: 'dashboard.link',
        email: person.email,
        delivery: issued.delivery,
        link: issued.delivery === 'sent' ? null : issued.link,
      };
    },
  );

  app.get('/dashboard/api/operator/plans', route, async () => {
    const counts = await organizations.countsByPlan();
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
        permissions: tier.permissions,
        organizations: counts.get(name) ?? 0,
      })),
    };
  });

  app.get('/dashboard/api/operator/fleet', route, async () => {
    const now = Date.now();
    const [instances, deployments] = await Promise.all([
      dependencies.instances.live(now - 3 * HEARTBEAT_INTERVAL_MS),
      deploymentRows(routes, dependencies.deploymentState, now),
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

  app.get<{ Querystring: Record<string, string | undefined> }>('/dashboard/api/operator/audit', route, async (request) => {
    const parsed = auditQuery.safeParse(request.query);
    if (!parsed.success) throw invalidParameter(String(parsed.error.issues[0]!.path[0] ?? 'query'), parsed.error.issues[0]!.message);
    const { before, limit, organization } = parsed.data;
    const entries = await dependencies.operatorAudit.list({
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
}
