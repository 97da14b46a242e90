/**
 * The organization's batches: a page of the list (newest first, searchable by id, endpoint or status),
 * one batch, and cancelling one (owners only, audited).
 */
import type { FastifyPluginAsync } from 'fastify';
import { toBatchObject } from '../../formats/openai-batches/batch-object.ts';
import { invalidParameter } from '../../core/service-error.ts';
import { access, pageOf, pageQuery, parseBody, signedIn, type DashboardApiDependencies } from './common.ts';
import type { BatchObject, PageOf } from './wire.ts';

type ById = { Params: { id: string } };

export const batchesApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { batches, accounts, lists, files }) => {
  app.get('/dashboard/api/batches', access('member'), async (request): Promise<PageOf<BatchObject>> => {
    const { organizationId } = signedIn(request).owner;
    const query = parseBody(pageQuery, request.query);
    let after: { createdAt: number; id: string } | undefined;
    if (query.after !== undefined) {
      const cursor = await lists.batches.findById(query.after);
      if (cursor === undefined || cursor.organizationId !== organizationId)
        throw invalidParameter('after', `No batch '${query.after}' to continue after.`);
      after = { createdAt: cursor.createdAt, id: cursor.id };
    }
    const rows = await lists.batches.list({
      organizationId,
      limit: query.limit + 1,
      ...(after === undefined ? {} : { after }),
      ...(query.q === undefined ? {} : { search: query.q }),
    });
    return pageOf(rows, query.limit, toBatchObject, (batch) => batch.id);
  });

  app.get<ById>('/dashboard/api/batches/:id', access('member'), async (request): Promise<BatchObject> => {
    const { organizationId } = signedIn(request).owner;
    const batch = toBatchObject(await batches.retrieveInOrganization(organizationId, request.params.id));
    // The page links the batch's files only while they can still be downloaded (deleted or expired: no link).
    const ids = [batch.input_file_id, batch.output_file_id, batch.error_file_id].filter((id): id is string => id !== null);
    const gone: string[] = [];
    for (const id of ids)
      if (
        !(await files.retrieve(organizationId, id).then(
          () => true,
          () => false,
        ))
      )
        gone.push(id);
    return { ...batch, unavailable_file_ids: gone };
  });

  app.post<ById>('/dashboard/api/batches/:id/cancel', access('owner'), async (request) => {
    const { owner } = signedIn(request);
    const batch = await batches.cancelInOrganization(owner.organizationId, request.params.id);
    await accounts.audit(owner, 'batch.cancelled', batch.id, request.ip);
    return toBatchObject(batch);
  });
};
