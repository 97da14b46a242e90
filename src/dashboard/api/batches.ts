/**
 * The organization's batches: the list, one batch, and cancelling one (owners only, audited).
 */
import type { FastifyPluginAsync } from 'fastify';
import { toBatchObject } from '../../batches/batch-object.ts';
import { access, signedIn, type DashboardApiDependencies } from './common.ts';
import type { BatchObject, ListOf } from './wire.ts';

type ById = { Params: { id: string } };

export const batchesApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { batches, accounts }) => {
  app.get('/dashboard/api/batches', access('member'), async (request): Promise<ListOf<BatchObject>> => {
    const list = await batches.listInOrganization(signedIn(request).owner.organizationId, 100);
    return { object: 'list', data: list.map(toBatchObject) };
  });

  app.get<ById>('/dashboard/api/batches/:id', access('member'), async (request) =>
    toBatchObject(await batches.retrieveInOrganization(signedIn(request).owner.organizationId, request.params.id)),
  );

  app.post<ById>('/dashboard/api/batches/:id/cancel', access('owner'), async (request) => {
    const { owner } = signedIn(request);
    const batch = await batches.cancelInOrganization(owner.organizationId, request.params.id);
    await accounts.audit(owner, 'batch.cancelled', batch.id, request.ip);
    return toBatchObject(batch);
  });
};
