/**
 * Stored responses of the response-style endpoint (SPEC "Response object", docs/wire-contracts.md
 * "Responses"); POST /v1/responses itself is served by generation-routes.ts with the responses format
 * and the endpoint steps in generation-endpoints.ts:
 *   GET    /v1/responses/{id}                  a stored response
 *   DELETE /v1/responses/{id}                  delete a stored response
 *   GET    /v1/responses/{id}/input_items      its input items, cursor pages
 * Each handler hands the request to the stored-response use cases
 * (services/responses/stored-response-requests.ts), with the queries read by the responses format
 * (formats/openai-responses/stored-response-queries.ts), and their answer to the edge.
 */
import type { FastifyInstance } from 'fastify';
import { openAIStoredResponsesWire } from '../formats/openai-responses/stored-response-queries.ts';
import type { RequestMetering } from '../services/metering/admitted-request.ts';
import { StoredResponseRequests } from '../services/responses/stored-response-requests.ts';
import { callerOf } from './caller-of.ts';
import type { StoredResponseStore } from './generation-endpoints.ts';

export function registerResponsesRoutes(app: FastifyInstance, store: StoredResponseStore, metering: RequestMetering): void {
  const requests = new StoredResponseRequests(store, metering, openAIStoredResponsesWire);
  app.get<{ Params: { id: string } }>(
    '/v1/responses/:id',
    { config: { switchyard: { permission: 'responses', summary: 'Retrieve a stored response.', openapiPath: '/v1/responses/{id}' } } },
    async (request, reply) => reply.sendAnswer(await requests.retrieve(callerOf(request), request.params.id, request.query)),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/responses/:id',
    { config: { switchyard: { permission: 'responses', summary: 'Delete a stored response.', openapiPath: '/v1/responses/{id}' } } },
    async (request, reply) => reply.sendAnswer(await requests.delete(callerOf(request), request.params.id)),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/responses/:id/input_items',
    {
      config: {
        switchyard: {
          permission: 'responses',
          summary: 'List the input items of a stored response (cursor pages).',
          openapiPath: '/v1/responses/{id}/input_items',
        },
      },
    },
    async (request, reply) => reply.sendAnswer(await requests.listInputItems(callerOf(request), request.params.id, request.query)),
  );
}
