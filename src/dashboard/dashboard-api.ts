/**
 * The dashboard's JSON API under /dashboard/api: authenticated by the session cookie only (an API key
 * is ignored here, and /v1 ignores the cookie), CSRF-checked on every state-changing call, scoped to
 * the session's organization. Errors are the SPEC envelope (the edge's error handler renders them):
 * 401 `session_expired` past a session's expiry, 401 `invalid_token` for a missing, malformed or
 * unknown session or CSRF token.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { KeyService } from '../accounts/key-service.ts';
import { KeyRequestError } from '../accounts/key-service.ts';
import { authError } from '../accounts/authenticator.ts';
import type { OwnerAccounts, SignedIn } from '../accounts/owner-accounts.ts';
import type { BatchService } from '../batches/batch-service.ts';
import { toBatchObject } from '../batches/batch-object.ts';
import { PERMISSIONS, type Config } from '../config/index.ts';
import { invalidParameter, notFound, ServiceError } from '../core/service-error.ts';
import type { OwnerRecord, SessionRecord } from '../db/repositories/owners-repository.ts';
import type { UsageRollupsRepository } from '../db/repositories/usage-rollups-repository.ts';
import type { AccountUsageReader } from '../services/account-usage.ts';
import { toFileObject } from '../services/files/file-object.ts';
import type { FileService } from '../services/files/file-service.ts';
import { usageReport, usageCsv, parseUsageRange } from './usage-report.ts';
import { allowedKeyTiers, keyLimits } from '../accounts/plans.ts';
import type { OperatorApiDependencies } from './operator-api.ts';
import { accessRefusal, type Access } from './dashboard-access.ts';

export const SESSION_COOKIE = 'switchyard_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface DashboardApiDependencies {
  config: Config;
  accounts: OwnerAccounts;
  keys: KeyService;
  usage: AccountUsageReader;
  rollups: UsageRollupsRepository;
  batches: BatchService;
  files: FileService;
  /** Absolute session lifetime, for the cookie's Max-Age. */
  sessionMaxAgeSeconds: number;
  /** The operator console and people management (operator-api.ts, people-api.ts); absent: not mounted. */
  operator?: OperatorApiDependencies;
}

export interface DashboardContext {
  token: string;
  session: SessionRecord;
  owner: OwnerRecord;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard: DashboardContext | undefined;
  }
  interface FastifyContextConfig {
    dashboardAccess?: Access;
  }
}

const signInBody = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(200),
  /** A six-digit code, or a recovery code (`xxxx-xxxx-xxxx-xxxx`). */
  totp: z.string().max(40).optional(),
});
const setPasswordBody = z.object({ token: z.string().min(1).max(100), password: z.string().min(1).max(200) });
const createKeyBody = z.object({
  name: z.string().trim().min(1).max(100),
  tier: z.string().min(1).optional(),
  permissions: z.array(z.enum(PERMISSIONS)).min(1).optional(),
  /** Days until the key expires; absent or null for no expiry. */
  expires_in_days: z.number().int().min(1).max(3650).nullable().optional(),
});
const rotateBody = z.object({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400),
});
// The secret is the server's (made at enrolment): a `secret` field sent here is ignored.
const totpEnableBody = z.object({ code: z.string().min(1).max(10), password: z.string().max(200).optional() });
const totpDisableBody = z.object({ password: z.string().max(200).optional(), code: z.string().max(40).optional() });

/** Parses a JSON body with zod into the SPEC 400 (first problem, with its field as `param`). */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const param = issue.path.join('.') || null;
  throw invalidParameter(param, `${param ?? 'body'}: ${issue.message}`);
}

function keyObject(
  record: Awaited<ReturnType<KeyService['list']>>[number],
  lastUsedDay: number | undefined,
  now: number,
): Record<string, unknown> {
  const status = record.revokedAt !== null ? 'revoked' : record.expiresAt !== null && record.expiresAt <= now ? 'expired' : 'active';
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
    status,
  };
}

export function registerDashboardApi(app: FastifyInstance, dependencies: DashboardApiDependencies): void {
  const { accounts, keys, config } = dependencies;
  app.decorateRequest('dashboard', undefined);

  const cookieOptions = (request: FastifyRequest): { path: string; httpOnly: true; sameSite: 'lax'; secure: boolean } => ({
    path: '/dashboard',
    httpOnly: true,
    sameSite: 'lax',
    // Secure whenever the owner reached us over TLS (directly or through a proxy that says so).
    secure: request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https',
  });

  const startSession = (request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn): Record<string, unknown> => {
    void reply.setCookie(SESSION_COOKIE, signedIn.token, { ...cookieOptions(request), maxAge: dependencies.sessionMaxAgeSeconds });
    return sessionObject(signedIn);
  };

  const sessionObject = (context: { token: string; session: SessionRecord; owner: OwnerRecord }): Record<string, unknown> => ({
    object: 'dashboard.session',
    id: context.session.id,
    email: context.owner.email,
    role: context.owner.role,
    organization: context.owner.organizationId,
    totp_enabled: context.owner.totpSecret !== null,
    csrf_token: accounts.csrfToken(context.token),
    idle_expires_at: context.session.idleExpiresAt,
    absolute_expires_at: context.session.absoluteExpiresAt,
  });

  // Session check before every non-public dashboard API route; CSRF on every state-changing one.
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.dashboardAccess;
    if (access === undefined || access === 'public') return;
    const token = request.cookies[SESSION_COOKIE];
    const resolved = await accounts.resolveSession(token);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const presented = request.headers[CSRF_HEADER];
      if (!accounts.csrfMatches(token!, typeof presented === 'string' ? presented : undefined)) {
        throw authError('invalid_token', 'The CSRF token is missing or does not match this session. Reload the page.');
      }
    }
    const refusal = accessRefusal(access, resolved.owner.role, request.routeOptions.url ?? request.url);
    if (refusal !== undefined)
      throw new ServiceError({ status: 403, type: 'permission_error', code: 'permission_denied', message: refusal });
    request.dashboard = { token: token!, ...resolved };
  });

  const route = (access: Access) => ({ config: { dashboardAccess: access } });
  const context = (request: FastifyRequest): DashboardContext => request.dashboard!;
  const client = (request: FastifyRequest) => ({ address: request.ip, userAgent: request.headers['user-agent'] ?? null });

  app.post('/dashboard/api/sign-in', route('public'), async (request, reply) => {
    const body = parseBody(signInBody, request.body);
    // A new session is minted whatever cookie came in (no session fixation).
    const sessionToken = request.cookies[SESSION_COOKIE];
    const signedIn = await accounts.signIn({
      email: body.email,
      password: body.password,
      ...(body.totp === undefined ? {} : { totp: body.totp }),
      ...(sessionToken === undefined ? {} : { sessionToken }),
      ...client(request),
    });
    return reply.send(startSession(request, reply, signedIn));
  });

  app.post('/dashboard/api/set-password', route('public'), async (request, reply) => {
    const body = parseBody(setPasswordBody, request.body);
    const signedIn = await accounts.setPasswordWithLink(body.token, body.password, client(request));
    return reply.send(startSession(request, reply, signedIn));
  });

  app.get('/dashboard/api/session', route('member'), async (request) => sessionObject(context(request)));

  app.post('/dashboard/api/sign-out', route('member'), async (request, reply) => {
    const { owner, session } = context(request);
    await accounts.revokeSessions(owner.id, session.id);
    void reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    return { object: 'dashboard.signed_out' };
  });

  app.get('/dashboard/api/sessions', route('member'), async (request) => {
    const { owner, session } = context(request);
    const sessions = await accounts.listSessions(owner.id);
    return {
      object: 'list',
      data: sessions.map((entry) => ({
        id: entry.id,
        current: entry.id === session.id,
        user_agent: entry.userAgent,
        address: entry.address,
        created_at: entry.createdAt,
        last_seen_at: entry.lastSeenAt,
        expires_at: Math.min(entry.idleExpiresAt, entry.absoluteExpiresAt),
      })),
    };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/sessions/:id/revoke', route('member'), async (request) => {
    const revoked = await accounts.revokeSessions(context(request).owner.id, request.params.id);
    if (revoked === 0) throw notFound('session_not_found', `No active session ${request.params.id}.`);
    return { object: 'dashboard.session.revoked', id: request.params.id };
  });

  app.post('/dashboard/api/sessions/revoke-all', route('member'), async (request, reply) => {
    const revoked = await accounts.revokeSessions(context(request).owner.id);
    void reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    return { object: 'dashboard.sessions.revoked', count: revoked };
  });

  app.post('/dashboard/api/totp/enrol', route('member'), async (request) => {
    const enrolment = await accounts.totpEnrolment(context(request).owner);
    return { object: 'dashboard.totp_enrolment', secret: enrolment.secret, uri: enrolment.uri, qr_code: enrolment.qrCode };
  });

  // Turning the second factor on or off needs the current password (or, to turn it off, a current
  // code) and ends the owner's other sessions.
  app.post('/dashboard/api/totp/enable', route('member'), async (request) => {
    const body = parseBody(totpEnableBody, request.body);
    const { owner, session } = context(request);
    const recoveryCodes = await accounts.enableTotp(owner, body.code, body.password === undefined ? {} : { password: body.password }, {
      sessionId: session.id,
      address: request.ip,
    });
    return { object: 'dashboard.totp', enabled: true, recovery_codes: recoveryCodes };
  });

  app.post('/dashboard/api/totp/disable', route('member'), async (request) => {
    const body = parseBody(totpDisableBody, request.body);
    const { owner, session } = context(request);
    await accounts.disableTotp(
      owner,
      { ...(body.password === undefined ? {} : { password: body.password }), ...(body.code === undefined ? {} : { code: body.code }) },
      { sessionId: session.id, address: request.ip },
    );
    return { object: 'dashboard.totp', enabled: false };
  });

  // The organization's plan bounds its keys (accounts/plans.ts): its tier and those ranked below it.
  const allowedTiers = async (organizationId: string): Promise<string[]> => {
    const plan = await dependencies.operator?.organizations.planOf(organizationId);
    if (plan !== undefined) return allowedKeyTiers(config, plan).reverse();
    return ((await accounts.allowedTiers(organizationId)) ?? [config.defaultTier]).filter((tier) => config.tiers[tier] !== undefined);
  };

  app.get('/dashboard/api/keys', route('member'), async (request) => {
    const { organizationId } = context(request).owner;
    const [records, lastUsed, tiers] = await Promise.all([
      keys.list(organizationId),
      dependencies.rollups.lastUsedDays(organizationId),
      allowedTiers(organizationId),
    ]);
    const now = Date.now();
    const plan = await dependencies.operator?.organizations.planOf(organizationId);
    const inPlan = (permission: string): boolean => plan === undefined || (plan.permissions as string[]).includes(permission);
    return {
      object: 'list',
      allowed_tiers: tiers.map((name) => ({ name, permissions: config.tiers[name]!.permissions.filter(inPlan) })),
      plan_permissions: plan?.permissions ?? PERMISSIONS,
      permissions: PERMISSIONS,
      data: records.reverse().map((record) => keyObject(record, lastUsed.get(record.id), now)),
    };
  });

  const ownKey = async (request: FastifyRequest, id: string) => {
    const record = await keys.findById(id);
    if (record === undefined || record.organizationId !== context(request).owner.organizationId)
      throw notFound('key_not_found', `No key ${id} in your organization.`);
    return record;
  };

  app.post('/dashboard/api/keys', route('owner'), async (request, reply) => {
    const body = parseBody(createKeyBody, request.body);
    const { owner } = context(request);
    const tiers = await allowedTiers(owner.organizationId);
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
      return reply.code(201).send({ ...keyObject(created.record, undefined, Date.now()), key: created.key });
    } catch (error) {
      if (error instanceof KeyRequestError) throw invalidParameter(body.permissions === undefined ? 'tier' : 'permissions', error.message);
      throw error;
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id/revoke', route('owner'), async (request) => {
    const record = await ownKey(request, request.params.id);
    await keys.revoke(record.id);
    await accounts.audit(context(request).owner, 'key.revoked', record.id, request.ip);
    return keyObject((await keys.findById(record.id))!, undefined, Date.now());
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id/rotate', route('owner'), async (request, reply) => {
    const body = parseBody(rotateBody, request.body);
    const record = await ownKey(request, request.params.id);
    try {
      const { created } = await keys.rotate(record.id, body.grace_seconds * 1000);
      await accounts.audit(context(request).owner, 'key.rotated', `${record.id} -> ${created.record.id}`, request.ip);
      return reply.code(201).send({
        ...keyObject(created.record, undefined, Date.now()),
        key: created.key,
        previous: keyObject((await keys.findById(record.id))!, undefined, Date.now()),
      });
    } catch (error) {
      if (error instanceof KeyRequestError) throw invalidParameter(null, error.message);
      throw error;
    }
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/dashboard/api/usage', route('member'), async (request) => {
    const { organizationId } = context(request).owner;
    const range = parseUsageRange(request.query, Date.now());
    // One rule (accounts/plans.ts): the day and month limits are the organization's plan.
    const plan = await dependencies.operator?.organizations.planOf(organizationId);
    return usageReport({
      rollups: dependencies.rollups,
      usage: dependencies.usage,
      organizationId,
      tier: plan?.tier ?? (await allowedTiers(organizationId))[0] ?? config.defaultTier,
      ...(plan === undefined ? {} : { limits: keyLimits(config, plan.tier, plan) }),
      range,
    });
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/dashboard/api/usage.csv', route('member'), async (request, reply) => {
    const { organizationId } = context(request).owner;
    const range = parseUsageRange(request.query, Date.now());
    const rows = await dependencies.rollups.daily(organizationId, range.fromDayStart, range.toDayStart);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="usage-${range.from}-${range.to}.csv"`)
      .send(usageCsv(rows));
  });

  app.get('/dashboard/api/batches', route('member'), async (request) => {
    const batches = await dependencies.batches.listInOrganization(context(request).owner.organizationId, 100);
    return { object: 'list', data: batches.map(toBatchObject) };
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/batches/:id', route('member'), async (request) =>
    toBatchObject(await dependencies.batches.retrieveInOrganization(context(request).owner.organizationId, request.params.id)),
  );

  app.post<{ Params: { id: string } }>('/dashboard/api/batches/:id/cancel', route('owner'), async (request) => {
    const { owner } = context(request);
    const batch = await dependencies.batches.cancelInOrganization(owner.organizationId, request.params.id);
    await accounts.audit(owner, 'batch.cancelled', batch.id, request.ip);
    return toBatchObject(batch);
  });

  app.get('/dashboard/api/files', route('member'), async (request) => {
    const { files } = await dependencies.files.list(context(request).owner.organizationId, { limit: 200, order: 'desc' });
    return { object: 'list', data: files.map(toFileObject) };
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/files/:id/content', route('member'), async (request, reply) => {
    const opened = await dependencies.files.openContent(context(request).owner.organizationId, request.params.id);
    const safeName = opened.file.filename.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply
      .type(opened.file.mediaType)
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `attachment; filename="${safeName}"`)
      .send(opened.content);
  });

  app.delete<{ Params: { id: string } }>('/dashboard/api/files/:id', route('owner'), async (request) => {
    const { owner } = context(request);
    const file = await dependencies.files.delete(owner.organizationId, request.params.id);
    await accounts.audit(owner, 'file.deleted', file.id, request.ip);
    return { id: file.id, object: 'file', deleted: true };
  });

  app.get('/dashboard/api/models', route('member'), async () => ({
    object: 'list',
    data: config.models.map((model) => ({
      id: model.id,
      aliases: model.aliases,
      description: model.description,
      capabilities: model.capabilities,
      context_window: model.contextWindow,
      max_output_tokens: model.maxOutputTokens,
      pricing: { input_per_million: model.pricing.inputPerMillion, output_per_million: model.pricing.outputPerMillion },
    })),
  }));

  app.get('/dashboard/api/audit', route('member'), async (request) => {
    const entries = await accounts.listAudit(context(request).owner.organizationId);
    return {
      object: 'list',
      data: entries.map((entry) => ({
        id: entry.id,
        actor: entry.actor,
        action: entry.action,
        target: entry.target,
        address: entry.address,
        created_at: entry.createdAt,
        count: entry.occurrences,
      })),
    };
  });
}
