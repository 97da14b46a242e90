/**
 * The response-style endpoint (SPEC "Response request" / "Response object", wire-contracts.md
 * "Responses"):
 *   POST   /v1/responses                       create (JSON, or server-sent events with stream: true)
 *   GET    /v1/responses/{id}                  a stored response
 *   DELETE /v1/responses/{id}                  delete a stored response
 *   GET    /v1/responses/{id}/input_items      its input items, cursor pages
 *
 * Create: decode (formats/openai-responses), resolve the model, prepend the stored chain of
 * `previous_response_id`, map reasoning.effort to a thinking budget, fit the context window
 * (`truncation`), admit against the caller's token limits and generate (routes/metered-generation.ts
 * over services/generation), encode, and with `store: true` save the response with this turn's input
 * before the client sees the end of it. Errors before the answer starts reach
 * the client as a JSON error with its status; once streaming, a failure ends with response.failed.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assembleResult } from '../core/assemble-result.ts';
import { invalidParameter } from '../core/service-error.ts';
import { applyHistory, applyReasoningBudget, decodeInputItemsQuery, decodeResponsesRequest, resolveItemReferences } from '../formats/openai-responses/decode-request.ts';
import { createResponseContext, encodeResponse } from '../formats/openai-responses/encode-response.ts';
import { encodeResponseStream } from '../formats/openai-responses/encode-stream.ts';
import type { ResponseItem, ResponseObject } from '../formats/openai-responses/wire-types.ts';
import type { GenerationStreamOptions } from '../services/generation/generation-service.ts';
import type { StoredResponses } from '../services/responses/stored-responses.ts';
import { fitContextWindow } from '../services/responses/truncate-conversation.ts';
import { IGNORED_PARAMETERS_HEADER } from './chat-completions.ts';
import { startMeteredGeneration, type GenerationRouteServices } from './metered-generation.ts';

/** Warning sent when the client used `max_tokens` (RFC 9111 `Warning: 299`, plus `Deprecation`). */
export const MAX_TOKENS_DEPRECATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  deprecation: 'true',
  warning: `299 switchyard "'max_tokens' is deprecated on /v1/responses; send 'max_output_tokens' instead."`,
});

/** Stored conversations of the responses endpoint, in the wire shapes of that format. */
export type StoredResponseStore = StoredResponses<ResponseItem, ResponseObject>;

export interface ResponsesRouteDependencies extends GenerationRouteServices {
  storedResponses: StoredResponseStore;
}

function organizationOf(request: FastifyRequest): string {
  // The edge authenticates every route registered here (permission `responses`) before the handler.
  const auth = request.auth;
  if (auth === undefined) throw new Error('responses route reached without authentication');
  return auth.organizationId;
}

export function registerResponsesRoutes(app: FastifyInstance, dependencies: ResponsesRouteDependencies): void {
  const { generation } = dependencies;
  const store = dependencies.storedResponses;

  app.post(
    '/v1/responses',
    {
      config: {
        switchyard: { permission: 'responses', limits: 'tokens', summary: 'Create a response (JSON, or server-sent events with stream: true); store: true keeps the conversation.' },
      },
    },
    async (request, reply) => {
      const organizationId = organizationOf(request);
      const decoded = decodeResponsesRequest(request.body, request.decodeOptions);
      const { options } = decoded;
      const { model } = generation.resolve(decoded.request.model);
      if (decoded.itemReferences.length > 0) resolveItemReferences(decoded, await store.findItems(decoded.itemReferences.map((reference) => reference.id), organizationId));

      if (options.previousResponseId !== null) applyHistory(decoded, await store.loadHistory(options.previousResponseId, organizationId));
      applyReasoningBudget(decoded.request, model.capabilities.includes('thinking'));
      fitContextWindow(decoded.request, { truncation: options.truncation, contextWindow: model.contextWindow, maxOutputTokens: options.maxOutputTokens });

      const headers: Record<string, string> = {};
      if (options.usedDeprecatedMaxTokens) Object.assign(headers, MAX_TOKENS_DEPRECATION_HEADERS);
      if (options.ignoredParameters.length > 0) {
        headers[IGNORED_PARAMETERS_HEADER] = options.ignoredParameters.join(', ');
        request.log.warn({ ignoredParameters: options.ignoredParameters }, 'request parameters not honoured');
      }
      if (Object.keys(headers).length > 0) request.extraHeaders = { ...request.extraHeaders, ...headers };

      const generationOptions: GenerationStreamOptions = {
        signal: request.clientSignal(),
        requestId: request.id,
        capabilityParams: {
          function_calling: 'tools',
          json_mode: 'text.format',
          thinking: 'reasoning.effort',
          streaming: 'stream',
          ...(options.imageParam === null ? {} : { vision: options.imageParam }),
        },
      };
      if (options.stream) generationOptions.capabilities = ['streaming'];
      const context = createResponseContext(options);
      const save = (response: ResponseObject): Promise<void> => store.save({ response, inputItems: decoded.input, organizationId });

      if (!options.stream) generationOptions.preferWholeResponse = true;
      const { parts } = await startMeteredGeneration(request, dependencies, decoded.request, generationOptions, '/v1/responses');
      if (options.stream) return reply.sendEvents(encodeResponseStream(parts, context, options.store ? { onFinal: save } : {}));
      const response = encodeResponse(await assembleResult(parts), context);
      if (options.store) await save(response);
      return reply.sendData({ ...response });
    },
  );

  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>(
    '/v1/responses/:id',
    { config: { switchyard: { permission: 'responses', summary: 'Retrieve a stored response.', openapiPath: '/v1/responses/{id}' } } },
    async (request, reply) => {
      const stream = request.query['stream'];
      if (stream === 'true' || stream === true) {
        throw invalidParameter('stream', "Invalid 'stream': replaying a stored response as events is not supported; retrieve it without 'stream'.");
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
    { config: { switchyard: { permission: 'responses', summary: 'List the input items of a stored response (cursor pages).', openapiPath: '/v1/responses/{id}/input_items' } } },
    async (request, reply) => {
      const query = decodeInputItemsQuery(request.query);
      return reply.sendData({ ...(await store.listInputItems(request.params.id, organizationOf(request), query)) });
    },
  );
}
