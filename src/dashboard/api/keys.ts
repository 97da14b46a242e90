/**
 * The organization's API keys: a page of the list (newest first, searchable by name, prefix or id; with
 * the tiers and permissions the plan allows, for the create form), create (the secret answered once),
 * rename and change permissions (within the plan), revoke and rotate (owners only). Every change is
 * written to the organization's audit log.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { KeyRequestError, type KeyService } from '../../accounts/key-service.ts';
import type { ApiKeyRecord } from '../../db/repositories/api-keys-repository.ts';
import { PERMISSIONS } from '../../config/index.ts';
import { invalidParameter, notFound } from '../../core/service-error.ts';
import { access, pageOf, pageQuery, parseBody, signedIn, type DashboardApiDependencies } from './common.ts';
import { PlanBounds } from './plan-bounds.ts';
import type { CreatedKeyObject, KeyObject, KeysList } from './wire.ts';

const createKeyBody = z.object({
  name: z.string().trim().min(1).max(100),
  tier: z.string().min(1).optional(),
  permissions: z.array(z.enum(PERMISSIONS)).min(1).optional(),
  /** Days until the key expires; absent or null for no expiry. */
  expires_in_days: z.number().int().min(1).max(3650).nullable().optional(),
});
const updateKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    permissions: z.array(z.enum(PERMISSIONS)).min(1).optional(),
  })
  .refine((body) => body.name !== undefined || body.permissions !== undefined, { message: 'Give a name or permissions to change.' });
const rotateBody = z.object({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400),
});

export function keyObject(record: ApiKeyRecord, lastUsedDay: number | undefined, now: number, replacedBy?: string): KeyObject {
  const expired = record.expiresAt !== null && record.expiresAt <= now;
  return {
    id: record.id,
    name: record.name,
    prefix: record.redacted,
    tier: record.tier,
    permissions: record.permissions,
    created_at: record.createdAt,
    last_used_day: lastUsedDay ?? null,
    expires_at: record.expiresAt,
    revoked_at: record.revokedAt,
    status: record.revokedAt !== null ? 'revoked' : expired ? 'expired' : 'active',
    replaced_by: replacedBy ?? null,
  };
}

/** Old key id -> the key that replaced it, from the audit log's `key.rotated` rows (`old -> new`). */
function replacements(targets: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const target of targets) {
    const [from, to] = target.split(' -> ');
    if (from !== undefined && to !== undefined) map.set(from, to);
  }
  return map;
}

/** The key `id` of the signed-in person's organization, else 404 (another organization's keys do not exist here). */
async function ownKey(keys: KeyService, request: FastifyRequest, id: string): Promise<ApiKeyRecord> {
  const record = await keys.findById(id);
  if (record === undefined || record.organizationId !== signedIn(request).owner.organizationId)
    throw notFound('key_not_found', `No key ${id} in your organization.`);
  return record;
}

/** A page of the organization's keys, with what the create form needs (the tiers and permissions the plan allows). */
async function listKeys(request: FastifyRequest, dependencies: DashboardApiDependencies, bounds: PlanBounds): Promise<KeysList> {
  const { keys, config, rollups, lists } = dependencies;
  const { organizationId } = signedIn(request).owner;
  const query = parseBody(pageQuery, request.query);
  const after = query.after === undefined ? undefined : await ownKey(keys, request, query.after);
  const plan = await bounds.planOf(organizationId);
  const [records, lastUsed, tiers, rotations] = await Promise.all([
    lists.keys.page(organizationId, {
      limit: query.limit + 1,
      ...(after === undefined ? {} : { after: { createdAt: after.createdAt, id: after.id } }),
      ...(query.q === undefined ? {} : { search: query.q }),
    }),
    rollups.lastUsedDays(organizationId),
    bounds.allowedTiers(organizationId, plan),
    lists.owners.keyRotations(organizationId),
  ]);
  const now = Date.now();
  const replaced = replacements(rotations);
  const inPlan = (permission: string): boolean => plan === undefined || (plan.permissions as string[]).includes(permission);
  const page = pageOf(
    records,
    query.limit,
    (record) => keyObject(record, lastUsed.get(record.id), now, replaced.get(record.id)),
    (record) => record.id,
  );
  return {
    ...page,
    allowed_tiers: tiers.map((name) => ({ name, permissions: config.tiers[name]!.permissions.filter(inPlan) })),
    plan_permissions: plan?.permissions ?? [...PERMISSIONS],
    permissions: [...PERMISSIONS],
  };
}

export const keysApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, dependencies) => {
  const { keys, accounts } = dependencies;
  const bounds = new PlanBounds(dependencies);

  app.get('/dashboard/api/keys', access('member'), (request) => listKeys(request, dependencies, bounds));

  app.post('/dashboard/api/keys', access('owner'), async (request, reply) => {
    const body = parseBody(createKeyBody, request.body);
    const { owner } = signedIn(request);
    const tiers = await bounds.allowedTiers(owner.organizationId);
    const tier = body.tier ?? tiers[0];
    if (tier === undefined || !tiers.includes(tier))
      throw invalidParameter('tier', `Your organization may create keys of these tiers: ${tiers.join(', ') || 'none'}.`);
    try {
      const created = await keys.create({
        organization: owner.organizationId,
        tier,
        name: body.name,
        ...(body.permissions === undefined ? {} : { permissions: body.permissions }),
        ...(body.expires_in_days === undefined || body.expires_in_days === null ? {} : { expiresInMs: body.expires_in_days * 86_400_000 }),
      });
      await accounts.audit(owner, 'key.created', created.record.id, request.ip);
      const answer: CreatedKeyObject = { ...keyObject(created.record, undefined, Date.now()), key: created.key };
      return reply.code(201).send(answer);
    } catch (error) {
      if (error instanceof KeyRequestError) throw invalidParameter(body.permissions === undefined ? 'tier' : 'permissions', error.message);
      throw error;
    }
  });

  // Rename and permission changes: the permissions stay within the organization's plan (KeyService).
  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id', access('owner'), async (request) => {
    const body = parseBody(updateKeyBody, request.body);
    const record = await ownKey(keys, request, request.params.id);
    try {
      const updated = await keys.update(record.id, {
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.permissions === undefined ? {} : { permissions: body.permissions }),
      });
      await accounts.audit(signedIn(request).owner, 'key.updated', record.id, request.ip);
      return keyObject(updated, undefined, Date.now());
    } catch (error) {
      if (error instanceof KeyRequestError) throw invalidParameter(body.permissions === undefined ? null : 'permissions', error.message);
      throw error;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id/revoke', access('owner'), async (request) => {
    const record = await ownKey(keys, request, request.params.id);
    await keys.revoke(record.id);
    await accounts.audit(signedIn(request).owner, 'key.revoked', record.id, request.ip);
    return keyObject((await keys.findById(record.id))!, undefined, Date.now());
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id/rotate', access('owner'), async (request, reply) => {
    const body = parseBody(rotateBody, request.body);
    const record = await ownKey(keys, request, request.params.id);
    try {
      const { created } = await keys.rotate(record.id, body.grace_seconds * 1000);
      await accounts.audit(signedIn(request).owner, 'key.rotated', `${record.id} -> ${created.record.id}`, request.ip);
      const now = Date.now();
      const answer: CreatedKeyObject = {
        ...keyObject(created.record, undefined, now),
        key: created.key,
        previous: keyObject((await keys.findById(record.id))!, undefined, now, created.record.id),
      };
      return reply.code(201).send(answer);
    } catch (error) {
      if (error instanceof KeyRequestError) throw invalidParameter(null, error.message);
      throw error;
    }
  });
};
