/**
 * The operator console's organizations (operators only, under /dashboard/api/operator): the list and
 * search, one organization with its people and keys, its plan and overrides, suspend and reactivate,
 * and a set-password link for one of its people (after the operator's password or code). Every change lands in the operators' audit log with
 * the operator's email and address.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { OperatorActor } from '../../accounts/organizations.ts';
import { allowedKeyTiers, type EffectivePlan } from '../../accounts/plans.ts';
import { access, parseBody, type WithOperator } from './common.ts';
import { keyObject } from './keys.ts';
import type { PlanFigures } from './wire.ts';

const planBody = z.object({
  plan: z.string().min(1).max(100),
  /** Per-organization figures; null clears them, absent keeps them. */
  overrides: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** The operator's own password, or a current code when their TOTP is on. */
const reauthenticationBody = z.object({ password: z.string().max(200).optional(), code: z.string().max(40).optional() });

type ById = { Params: { id: string } };
const operatorOnly = access('operator');

export function planObject(plan: EffectivePlan): PlanFigures {
  return {
    tier: plan.tier,
    custom: plan.custom,
    requests_per_minute: plan.requestsPerMinute,
    tokens_per_minute: plan.tokensPerMinute,
    tokens_per_day: plan.tokensPerDay,
    tokens_per_month: plan.tokensPerMonth,
    concurrent_batches: plan.concurrentBatches,
    max_requests_per_batch: plan.maxRequestsPerBatch,
    max_active_keys: plan.maxActiveKeys,
    storage_quota_bytes: plan.storageQuotaBytes,
    permissions: plan.permissions,
  };
}

const actor = (request: FastifyRequest): OperatorActor => ({ email: request.dashboard!.owner.email, address: request.ip });

export const operatorOrganizationsApi: FastifyPluginAsync<WithOperator> = async (app, { operator, config, keys, accounts }) => {
  const { organizations, people } = operator;

  app.get<{ Querystring: { search?: string } }>('/dashboard/api/operator/organizations', operatorOnly, async (request) => {
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
        max_active_keys: row.effective.maxActiveKeys,
        today: { requests: row.today.requests, tokens: row.today.tokens, cost_usd: row.today.costUsd },
        month: { requests: row.month.requests, tokens: row.month.tokens, cost_usd: row.month.costUsd },
        last_active_day: row.lastActiveDay,
        created_at: row.createdAt,
      })),
    };
  });

  app.get<ById>('/dashboard/api/operator/organizations/:id', operatorOnly, async (request) => {
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
        invitation: person.invitation,
        totp_enabled: person.totpEnabled,
        last_seen_at: person.lastSeenAt,
      })),
      keys: keyRecords.reverse().map((record) => {
        const { id, name, prefix, tier, permissions, status } = keyObject(record, undefined, now);
        return { id, name, prefix, tier, permissions, status };
      }),
    };
  });

  app.post<ById>('/dashboard/api/operator/organizations/:id/plan', operatorOnly, async (request) => {
    const body = parseBody(planBody, request.body);
    const result = await organizations.setPlan(request.params.id, body.plan, body.overrides, actor(request));
    return { object: 'organization.plan', id: request.params.id, plan: planObject(result.plan), narrowed_keys: result.narrowedKeys };
  });

  app.post<ById>('/dashboard/api/operator/organizations/:id/suspend', operatorOnly, async (request) => {
    await organizations.suspend(request.params.id, actor(request));
    return { object: 'organization.status', id: request.params.id, status: 'suspended' };
  });

  app.post<ById>('/dashboard/api/operator/organizations/:id/resume', operatorOnly, async (request) => {
    await organizations.resume(request.params.id, actor(request));
    return { object: 'organization.status', id: request.params.id, status: 'active' };
  });

  app.post<{ Params: { id: string; person: string } }>(
    '/dashboard/api/operator/organizations/:id/people/:person/reset-link',
    operatorOnly,
    async (request) => {
      const body = parseBody(reauthenticationBody, request.body ?? {});
      const { owner: me } = request.dashboard!;
      // The organization must be one the console shows (never the operators' own): 404 otherwise.
      const organization = await organizations.get(request.params.id);
      const person = await people.find(organization.id, request.params.person);
      // Minting a credential for someone else: the operator proves it is them (throttled, failures audited).
      await accounts.reauthenticate(
        me,
        { ...(body.password === undefined ? {} : { password: body.password }), ...(body.code === undefined ? {} : { code: body.code }) },
        request.ip,
      );
      const issued = await people.resetLink(person, request.publicOrigin());
      await organizations.audit(actor(request), 'owner.link_issued', person.organizationId, person.email, { delivery: issued.delivery });
      // Shown once, to this operator, only when no mail left (they pass it on by hand); never logged.
      return {
        object: 'dashboard.link',
        email: person.email,
        delivery: issued.delivery,
        link: issued.delivery === 'sent' ? null : issued.link,
      };
    },
  );
};
