/**
 * /v1/batches (SPEC "Batch", Endpoints table, "Batch workflow rules"): create, retrieve, cancel
 * (`POST /v1/batches/{batch_id}/cancel`, no body, as the OpenAI SDK sends it) and list (newest first,
 * cursor `after`, `limit` 1-100 default 20, optional `status` filter). Each handler hands the request to
 * the batches use cases (batches/batch-requests.ts) in the OpenAI batches wire format
 * (formats/openai-batches) and their answer to the edge.
 * The routes ask only for a valid key at the edge: the service answers a Free-tier caller with the
 * SPEC's `batch_api_not_allowed` before checking the `batches` permission.
 */
import type { FastifyInstance } from 'fastify';
import { BatchRequests } from '../batches/batch-requests.ts';
import type { BatchService } from '../batches/batch-service.ts';
import { openAIBatchesWire } from '../formats/openai-batches/openai-batches-wire.ts';
import type { RequestMetering } from '../services/metering/admitted-request.ts';
import { callerOf } from './caller-of.ts';

interface BatchParams {
  batch_id: string;
}

export function registerBatchRoutes(app: FastifyInstance, batches: BatchService, metering: RequestMetering): void {
  const requests = new BatchRequests(batches, metering, openAIBatchesWire);
  app.post(
    '/v1/batches',
    { config: { switchyard: { permission: 'authenticated', limits: 'request', summary: 'Create a batch from an uploaded JSONL file.' } } },
    async (request, reply) => reply.sendAnswer(await requests.create(callerOf(request), request.body)),
  );

  app.get(
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
    async (request, reply) => reply.sendAnswer(await requests.list(callerOf(request), request.query)),
  );

  app.get<{ Params: BatchParams }>(
    '/v1/batches/:batch_id',
    { config: { switchyard: { permission: 'authenticated', limits: 'request', summary: 'Retrieve a batch: status and progress.' } } },
    async (request, reply) => reply.sendAnswer(await requests.retrieve(callerOf(request), request.params.batch_id)),
  );

  app.post<{ Params: BatchParams }>(
    '/v1/batches/:batch_id/cancel',
    { config: { switchyard: { permission: 'authenticated', limits: 'request', summary: 'Cancel a validating or in-progress batch.' } } },
    async (request, reply) => reply.sendAnswer(await requests.cancel(callerOf(request), request.params.batch_id)),
  );
}
