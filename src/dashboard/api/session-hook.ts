/**
 * The one check in front of every dashboard API route (as fastify/demo's `routes/api/autohooks.ts`):
 * a route's `dashboardAccess` option says who may call it; every route but the public ones needs a
 * live session cookie, every state-changing call the session's CSRF header, and the person's role must
 * be allowed (dashboard-access.ts). Errors are the SPEC envelope: 401 `session_expired` past a session's
 * expiry, 401 `invalid_token` for a missing, malformed or unknown session or CSRF token, 403
 * `permission_denied` for a role that may not, 403 `organization_suspended` for a change (or a file
 * download) by a person of a suspended organization.
 */
import type { FastifyInstance } from 'fastify';
import { authError } from '../../accounts/authenticator.ts';
import type { DashboardAccounts } from '../../accounts/dashboard-accounts.ts';
import { ServiceError } from '../../core/service-error.ts';
import { accessRefusal, suspendedRefusal } from '../dashboard-access.ts';
import { CSRF_HEADER, SESSION_COOKIE } from './common.ts';

export function installSessionHook(
  app: FastifyInstance,
  accounts: DashboardAccounts,
  isSuspended?: (organizationId: string) => Promise<boolean>,
): void {
  app.decorateRequest('dashboard', undefined);
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
    const url = request.routeOptions.url ?? request.url;
    const readOnly = suspendedRefusal(request.method, url);
    if (readOnly !== undefined && resolved.owner.role !== 'operator' && (await isSuspended?.(resolved.owner.organizationId)))
      throw new ServiceError({ status: 403, type: 'permission_error', code: 'organization_suspended', message: readOnly });
    request.dashboard = { token: token!, ...resolved };
  });
}
