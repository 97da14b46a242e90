/**
 * Stored responses of the response-style endpoint (SPEC "Response object", docs/wire-contracts.md
 * "Responses"); POST /v1/responses itself is served by generation-routes.ts with the responses format
 * and the endpoint steps in generation-endpoints.ts:
 *   GET    /v1/responses/{id}                  a stored response
 *   DELETE /v1/responses/{id}                  delete a stored response
 *   GET    /v1/responses/{id}/input_items      its input items, cursor pages

 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidParameter } from '../core/service-error.ts';
import { decodeInputItemsQuery } from '../formats/openai-responses/decode-request.ts';
import type { StoredResponseStore } from './generation-endpoints.ts';

function organizationOf(request: FastifyRequest): string {
  // The edge authenticates every route registered here (permission `responses`) before the handler.
  const auth = request.auth;
  if (auth === undefined) throw new Error('responses route reached without authentication');
  return auth.organizationId;
}

export function registerResponsesRoutes(app: FastifyInstance, store: StoredResponseStore): void {
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>(
    '/v1/responses/:id',
    { config: { switchyard: { permission: 'responses', summary: 'Retrieve a stored response.', openapiPath: '/v1/responses/{id}' } } },
    async (request, reply) => {
      const stream = request.query['stream'];
      if (stream === 'true' || stream === true) {
        throw invalidParameter(
          'stream',
          "Invalid 'stream': replaying a stored response as events is not supported; retrieve it without 'stream'.",
        );
      }
      return reply.sendData({ ...(await store.retrieve(request.params.id, organizationOf(request))) });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/responses/:id',
    { config: { switchyard: { permission: 'responses', summary: 'Delete a stored response.', openapiPath: '/v1/responses/{id}' } } },
    async (request, reply) => reply.sendData({ ...(await store.delete(request.params.id, organizationOf(request))) }),
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
    async (request, reply) => {
      const query = decodeInputItemsQuery(request.query);
      return reply.sendData({ ...(await store.listInputItems(request.params.id, organizationOf(request), query)) });
    },
  );
}
