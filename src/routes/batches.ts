/**
 * /v1/batches (SPEC "Batch", Endpoints table, "Batch workflow rules"): create, retrieve, cancel
 * (`POST /v1/batches/{batch_id}/cancel`, no body, as the OpenAI SDK sends it) and list (newest first,
 * cursor `after`, `limit` 1-100 default 20, optional `status` filter).
 * The routes ask only for a valid key at the edge: the service answers a Free-tier caller with the
 * SPEC's `batch_api_not_allowed` before checking the `batches` permission.
 */
import type { FastifyInstance } from 'fastify';
import { toBatchObject } from '../batches/batch-object.ts';
import type { BatchService } from '../batches/batch-service.ts';
import type { BatchStatus } from '../batches/batch-service.ts';
import { parseLimit } from './files.ts';

interface BatchParams {
  batch_id: string;
}

export function registerBatchRoutes(app: FastifyInstance, batches: BatchService): void {
  app.post(
    '/v1/batches',
    { config: { switchyard: { permission: 'authenticated', limits: 'request', summary: 'Create a batch from an uploaded JSONL file.' } } },
    async (request, reply) => reply.sendData({ ...toBatchObject(await batches.create(request.auth!, request.body)) }),
  );

  app.get<{ Querystring: { after?: string; limit?: string; status?: string } }>(
    '/v1/batches',
    {
      config: {
        switchyard: {
          permission: 'authenticated',
          limits: 'request',
          summary: 'List batches, newest first (cursor pagination, status filter).',
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const page = await batches.list(request.auth!, {
        limit: parseLimit(query.limit, 100, 20),
        ...(query.after === undefined || query.after === '' ? {} : { after: query.after }),
        ...(query.status === undefined || query.status === '' ? {} : { status: query.status as BatchStatus }),
      });
      const data = page.batches.map(toBatchObject);
      return reply.sendData({
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
        has_more: page.hasMore,
      });
    },
  );

  app.get<{ Params: BatchParams }>(
    '/v1/batches/:batch_id',
    { config: { switchyard: { permission: 'authenticated', limits: 'request', summary: 'Retrieve a batch: status and progress.' } } },
    async (request, reply) => reply.sendData({ ...toBatchObject(await batches.retrieve(request.auth!, request.params.batch_id)) }),
  );

  app.post<{ Params: BatchParams }>(
    '/v1/batches/:batch_id/cancel',
    { config: { switchyard: { permission: 'authenticated', limits: 'request', summary: 'Cancel a validating or in-progress batch.' } } },
    async (request, reply) => reply.sendData({ ...toBatchObject(await batches.cancel(request.auth!, request.params.batch_id)) }),
  );
}
