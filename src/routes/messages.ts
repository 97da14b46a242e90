/**
 * POST /v1/messages and POST /v1/messages/count_tokens: the message-style endpoint in the Anthropic
 * Messages shape. Decode (formats/anthropic-messages), admit against the caller's token limits,
 * generate (services/generation, metered by the admission), encode as a message JSON body or as named
 * server-sent events.
 *
 * Errors before the answer starts (bad request, unknown model, missing capability, limits, every
 * upstream attempt failed) reach the client as a JSON error with its status, in the SPEC envelope plus
 * the top-level `"type":"error"` (errorStyle `anthropic`); once streaming, a failure ends the stream
 * with `event: error`. Keep-alives are Anthropic `ping` events. `anthropic-version` is not checked:
 * 2023-06-01 (SDK 0.x) and 2026-10-21 (SDK 1.x) both work.
 */
import type { FastifyInstance } from 'fastify';
import { assembleResult } from '../core/assemble-result.ts';
import { encodeCountTokensResponse } from '../formats/anthropic-messages/count-tokens.ts';
import { decodeCountTokensRequest, decodeMessagesRequest } from '../formats/anthropic-messages/decode-request.ts';
import { encodeMessagesResponse } from '../formats/anthropic-messages/encode-response.ts';
import { encodeMessagesStream, messagesPingEvent } from '../formats/anthropic-messages/encode-stream.ts';
import type { GenerationStreamOptions } from '../services/generation/generation-service.ts';
import { startMeteredGeneration, type GenerationRouteServices } from './metered-generation.ts';

export function registerMessagesRoutes(app: FastifyInstance, services: GenerationRouteServices): void {
  const { generation } = services;
  app.post(
    '/v1/messages',
    {
      config: {
        switchyard: {
          permission: 'messages',
          limits: 'tokens',
          errorStyle: 'anthropic',
          summary: 'Create a message (Anthropic Messages shape; server-sent events with stream: true).',
        },
      },
    },
    async (request, reply) => {
      const decoded = decodeMessagesRequest(request.body, request.decodeOptions);
      const options: GenerationStreamOptions = { signal: request.clientSignal(), requestId: request.id };
      if (decoded.stream) options.capabilities = ['streaming'];
      if (decoded.imageParam !== undefined) options.capabilityParams = { vision: decoded.imageParam };

      if (!decoded.stream) options.preferWholeResponse = true;
      const { parts, promptTokens } = await startMeteredGeneration(request, services, decoded.request, options, '/v1/messages');

      // Anthropic echoes the model as the client spelled it (an alias stays an alias).
      const echoedModel = decoded.request.model;
      if (decoded.stream) {
        const events = encodeMessagesStream(parts, { model: echoedModel, inputTokens: promptTokens });
        return reply.sendEvents(events, { keepAlive: messagesPingEvent() });
      }
      const result = await assembleResult(parts);
      return reply.sendData({ ...encodeMessagesResponse(result, { model: echoedModel }) });
    },
  );

  app.post(
    '/v1/messages/count_tokens',
    {
      config: {
        switchyard: {
          permission: 'messages',
          errorStyle: 'anthropic',
          summary: 'Count the input tokens of a message request (local estimate with gpt-tokenizer).',
        },
      },
    },
    async (request, reply) => {
      const decoded = decodeCountTokensRequest(request.body, request.decodeOptions);
      // Unknown models are 404 and non-chat models 400 here too, as on /v1/messages.
      generation.resolve(decoded.model, ['chat']);
      return reply.sendData({ ...encodeCountTokensResponse(decoded) });
    },
  );
}
