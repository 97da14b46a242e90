/**
 * Signing in and out, and the person's sessions: sign-in and set-password (public; a new session is
 * minted whatever cookie came in; a set-password link of an account with TOTP on opens none, the
 * person then signs in with the code), the current session with its CSRF token, sign-out, the list of
 * sessions, revoking one or all.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SignedIn } from '../../accounts/dashboard-accounts.ts';
import { notFound, ServiceError } from '../../core/service-error.ts';
import {
  access,
  client,
  cookieOptions,
  parseBody,
  SESSION_COOKIE,
  signedIn,
  type DashboardApiDependencies,
  type DashboardContext,
} from './common.ts';
import type { SessionObject } from './wire.ts';

const signInBody = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(200),
  /** A six-digit code, or a recovery code (`xxxx-xxxx-xxxx-xxxx`). */
  totp: z.string().max(40).optional(),
});
const setPasswordBody = z.object({ token: z.string().min(1).max(100), password: z.string().min(1).max(200) });

/** SSO-only deployments and organizations (accounts/sso/) refuse the password form: 403 saying to use the provider. */
function refuseSsoOnly(refusal: string | undefined): void {
  if (refusal !== undefined) throw new ServiceError({ status: 403, type: 'permission_error', code: 'sso_required', message: refusal });
}

export const sessionApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { accounts, sessionMaxAgeSeconds, sso }) => {
  const sessionObject = (context: Pick<DashboardContext, 'token' | 'session' | 'owner'>): SessionObject => ({
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
  const startSession = (request: FastifyRequest, reply: FastifyReply, started: SignedIn): SessionObject => {
    void reply.setCookie(SESSION_COOKIE, started.token, { ...cookieOptions(request), maxAge: sessionMaxAgeSeconds });
    return sessionObject(started);
  };

  app.post('/dashboard/api/sign-in', access('public'), async (request, reply) => {
    const body = parseBody(signInBody, request.body);
    refuseSsoOnly(await sso?.passwordRefusal(body.email));
    // A new session is minted whatever cookie came in (no session fixation).
    const sessionToken = request.cookies[SESSION_COOKIE];
    const started = await accounts.signIn({
      email: body.email,
      password: body.password,
      ...(body.totp === undefined ? {} : { totp: body.totp }),
      ...(sessionToken === undefined ? {} : { sessionToken }),
      ...client(request),
    });
    return reply.send(startSession(request, reply, started));
  });

  app.post('/dashboard/api/set-password', access('public'), async (request, reply) => {
    const body = parseBody(setPasswordBody, request.body);
    refuseSsoOnly(await sso?.passwordRefusalForLink(body.token));
    const started = await accounts.setPasswordWithLink(body.token, body.password, client(request));
    // With TOTP on no session opens here: the person signs in with the new password and a code.
    if ('secondFactorRequired' in started)
      return reply.send({ object: 'dashboard.password_set', email: started.owner.email, totp_required: true });
    return reply.send(startSession(request, reply, started));
  });

  app.get('/dashboard/api/session', access('member'), async (request) => sessionObject(signedIn(request)));

  app.post('/dashboard/api/sign-out', access('member'), async (request, reply) => {
    const { owner, session } = signedIn(request);
    await accounts.revokeSessions(owner.id, session.id);
    void reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    return { object: 'dashboard.signed_out' };
  });

  app.get('/dashboard/api/sessions', access('member'), async (request) => {
    const { owner, session } = signedIn(request);
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

  app.post<{ Params: { id: string } }>('/dashboard/api/sessions/:id/revoke', access('member'), async (request) => {
    const revoked = await accounts.revokeSessions(signedIn(request).owner.id, request.params.id);
    if (revoked === 0) throw notFound('session_not_found', `No active session ${request.params.id}.`);
    return { object: 'dashboard.session.revoked', id: request.params.id };
  });

  app.post('/dashboard/api/sessions/revoke-all', access('member'), async (request, reply) => {
    const revoked = await accounts.revokeSessions(signedIn(request).owner.id);
    void reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    return { object: 'dashboard.sessions.revoked', count: revoked };
  });
};
