/**
 * The dashboard's JSON API under /dashboard/api: one plugin per resource (as fastify/demo's
 * `routes/api/<resource>/index.ts`), behind the one session hook (session-hook.ts). Authenticated by the
 * session cookie only (an API key is ignored here, and /v1 ignores the cookie), CSRF-checked on every
 * state-changing call, scoped to the session's organization; operators reach the operator resources
 * and their own account only (dashboard-access.ts).
 */
import type { FastifyInstance } from 'fastify';
import { totpApi, passwordApi } from './account.ts';
import { auditApi } from './audit.ts';
import { batchesApi } from './batches.ts';
import { budgetsApi, operatorBudgetsApi } from './budgets.ts';
import { cacheApi } from './cache.ts';
import type { DashboardApiDependencies } from './common.ts';
import { filesApi } from './files.ts';
import { keysApi } from './keys.ts';
import { modelsApi } from './models.ts';
import { operatorOrganizationsApi } from './operator-organizations.ts';
import { operatorOrganizationLimitsApi, organizationLimitsApi } from './organization-limits.ts';
import { operatorServiceApi } from './operator-service.ts';
import { peopleApi } from './people.ts';
import { sessionApi } from './session.ts';
import { ssoApi } from './sso.ts';
import { installSessionHook } from './session-hook.ts';
import { usageApi } from './usage.ts';
import { operatorWebhooksApi, webhooksApi } from './webhooks.ts';

export type { DashboardApiDependencies, OperatorApiDependencies } from './common.ts';

export async function registerDashboardApi(app: FastifyInstance, dependencies: DashboardApiDependencies): Promise<void> {
  const organizations = dependencies.operator?.organizations;
  installSessionHook(app, dependencies.accounts, organizations === undefined ? undefined : (id) => organizations.isSuspended(id));
  for (const resource of [sessionApi, totpApi, keysApi, usageApi, batchesApi, filesApi, modelsApi, auditApi, organizationLimitsApi]) {
    await app.register(resource, dependencies);
  }
  const { operator, alerts, sso, responseCache, budgets } = dependencies;
  if (sso !== undefined) await app.register(ssoApi, { ...dependencies, sso });
  if (alerts !== undefined) await app.register(webhooksApi, { ...dependencies, alerts });
  if (responseCache !== undefined) await app.register(cacheApi, { ...dependencies, responseCache });
  if (budgets !== undefined) await app.register(budgetsApi, { ...dependencies, budgets });
  if (operator === undefined) return;
  for (const resource of [peopleApi, passwordApi, operatorOrganizationsApi, operatorServiceApi, operatorOrganizationLimitsApi]) {
    await app.register(resource, { ...dependencies, operator });
  }
  if (alerts !== undefined) await app.register(operatorWebhooksApi, { ...dependencies, operator, alerts });
  if (budgets !== undefined) await app.register(operatorBudgetsApi, { ...dependencies, operator, budgets });
}
