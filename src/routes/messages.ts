/**
 * POST /v1/messages/count_tokens, beside the message-style endpoint (POST /v1/messages is served by
 * generation-routes.ts with the Messages format). Errors carry the Anthropic top-level `"type":"error"`.
 */
import type { FastifyInstance } from 'fastify';
import { anthropicMessagesFormat } from '../formats/anthropic-messages/anthropic-messages-format.ts';
import { encodeCountTokensResponse } from '../formats/anthropic-messages/count-tokens.ts';
import { decodeCountTokensRequest } from '../formats/anthropic-messages/decode-request.ts';
import type { GenerationService } from '../services/generation/generation-service.ts';

export function registerMessagesRoutes(app: FastifyInstance, generation: Pick<GenerationService, 'resolve'>): void {
  app.post(
    '/v1/messages/count_tokens',
    {
      config: {
        switchyard: {
          permission: 'messages',
          format: anthropicMessagesFormat,
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
