/**
 * Single sign-on's routes (accounts/sso/): the providers for the sign-in page's buttons, the start (a
 * redirect to the provider, with the browser's binding cookie), the provider's callback (a session
 * exactly like a password sign-in's, then the dashboard; or a page saying what failed), and the
 * operator's "end this person's sessions now". The start and the callback are page visits, not API
 * calls: they answer redirects and HTML, never JSON.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { SsoSignIn } from '../../accounts/sso/sso-sign-in.ts';
import { SsoError } from '../../accounts/sso/sso-errors.ts';
import { PAGE_HEADERS, ssoFailurePage } from '../sso-page.ts';
import { access, client, cookieOptions, SESSION_COOKIE, signedIn, type DashboardApiDependencies } from './common.ts';

/** Binds a started sign-in to the browser that started it (its SHA-256 is in the pending row). */
export const SSO_BROWSER_COOKIE = 'switchyard_sso';
const SSO_PATH = '/dashboard/api/sso';

type ByProvider = { Params: { provider: string } };

export const ssoApi: FastifyPluginAsync<DashboardApiDependencies & { sso: SsoSignIn }> = async (
  app,
  { sso, config, sessionMaxAgeSeconds },
) => {
  const origin = (request: FastifyRequest) => (config.server.publicBaseUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
  const callbackUrl = (request: FastifyRequest, provider: string) =>
    `${origin(request)}${SSO_PATH}/${encodeURIComponent(provider)}/callback`;
  const failure = (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    const known = error instanceof SsoError;
    // The person reads the sentence; the operator's log gets what lies beneath (never a token: the library's errors carry none).
    request.log.warn({ err: known ? (error.detail ?? error) : error, code: known ? error.code : 'internal' }, 'single sign-on failed');
    const message = known
      ? error.message
      : 'Something went wrong on our side while signing you in. Try again in a moment; if it lasts, ask the operator.';
    return reply
      .code(known ? error.status : 500)
      .headers(PAGE_HEADERS)
      .type('text/html; charset=utf-8')
      .send(ssoFailurePage(message, known ? error.code : 'internal'));
  };
  const bindingCookie = (request: FastifyRequest) => ({ ...cookieOptions(request), path: SSO_PATH });

  app.get(`${SSO_PATH}/providers`, access('public'), async () => ({
    object: 'list',
    data: sso.providers().map((provider) => ({ id: provider.id, label: provider.label, start_url: `${SSO_PATH}/${provider.id}/start` })),
    sso_only: config.sso.ssoOnly,
  }));

  app.get<ByProvider>(`${SSO_PATH}/:provider/start`, access('public'), async (request, reply) => {
    try {
      const started = await sso.start(request.params.provider, callbackUrl(request, request.params.provider), request.ip);
      void reply.setCookie(SSO_BROWSER_COOKIE, started.browserToken, {
        ...bindingCookie(request),
        maxAge: Math.floor(config.sso.pendingLifetimeMs / 1000),
      });
      return reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(started.url.href, 302);
    } catch (error) {
      return failure(request, reply, error);
    }
  });

  app.get<ByProvider>(`${SSO_PATH}/:provider/callback`, access('public'), async (request, reply) => {
    void reply.clearCookie(SSO_BROWSER_COOKIE, bindingCookie(request));
    try {
      const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
      const started = await sso.finish(request.params.provider, query, request.cookies[SSO_BROWSER_COOKIE], client(request));
      // A new session whatever cookie came in (no session fixation), as a password sign-in.
      void reply.setCookie(SESSION_COOKIE, started.token, { ...cookieOptions(request), maxAge: sessionMaxAgeSeconds });
      // The home of each area (pages/routes.js `homeOf`).
      const home = started.owner.role === 'operator' ? '/dashboard/operator/organizations' : '/dashboard/keys';
      return reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(home, 302);
    } catch (error) {
      return failure(request, reply, error);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/operator/people/:id/sessions/revoke', access('operator'), async (request) => {
    const count = await sso.endSessions(request.params.id, { email: signedIn(request).owner.email, address: request.ip });
    return { object: 'dashboard.sessions.revoked', count };
  });
};
