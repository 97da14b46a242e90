/**
 * An organization's keys and stored bytes against its plan's cap and quota (issue 37 item 5): the
 * owners' and members' `GET /dashboard/api/limits` (their own organization), and the operators'
 * `GET /dashboard/api/operator/organizations/:id/limits` (any organization; 404 for an unknown one).
 */
import type { FastifyPluginAsync } from 'fastify';
import { access, signedIn, type DashboardApiDependencies, type WithOperator } from './common.ts';
import type { OrganizationLimits } from './wire.ts';

async function limitsOf(dependencies: DashboardApiDependencies, organizationId: string): Promise<OrganizationLimits> {
  const [keys, storage] = await Promise.all([dependencies.keys.allowance(organizationId), dependencies.files.storageUsage(organizationId)]);
  return {
    object: 'organization.limits',
    organization: organizationId,
    keys: { active: keys.active, limit: keys.limit },
    storage:
      storage === undefined
        ? null
        : { used_bytes: storage.storedBytes, reserved_bytes: storage.reservedBytes, limit_bytes: storage.limitBytes },
  };
}

export const organizationLimitsApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, dependencies) => {
  app.get('/dashboard/api/limits', access('member'), (request) => limitsOf(dependencies, signedIn(request).owner.organizationId));
};

export const operatorOrganizationLimitsApi: FastifyPluginAsync<WithOperator> = async (app, dependencies) => {
  app.get<{ Params: { id: string } }>('/dashboard/api/operator/organizations/:id/limits', access('operator'), async (request) => {
    const organization = await dependencies.operator.organizations.get(request.params.id);
    return limitsOf(dependencies, organization.id);
  });
};
