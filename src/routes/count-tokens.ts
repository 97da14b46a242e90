/**
 * POST /v1/messages/count_tokens, beside the message-style endpoint (POST /v1/messages is served by
 * generation-routes.ts with the Messages format). Errors carry the Anthropic top-level `"type":"error"`.
 * The count is a billed use case, metered like embeddings (services/count-tokens/count-tokens-service.ts).
 */
import type { FastifyInstance } from 'fastify';
import { jsonBody } from '../core/generation-format.ts';
import { anthropicMessagesFormat } from '../formats/anthropic-messages/anthropic-messages-format.ts';
import { encodeCountTokensResponse } from '../formats/anthropic-messages/count-tokens.ts';
import { decodeCountTokensRequest } from '../formats/anthropic-messages/decode-request.ts';
import type { CountTokensService } from '../services/count-tokens/count-tokens-service.ts';
import { callerOf } from './caller-of.ts';

export function registerCountTokensRoute(app: FastifyInstance, countTokens: Pick<CountTokensService, 'run' | 'decodeOptions'>): void {
  app.post(
    '/v1/messages/count_tokens',
    {
      config: {
        switchyard: {
          permission: 'messages',
          limits: 'tokens',
          format: anthropicMessagesFormat,
          summary: 'Count the input tokens of a message request (a local estimate in the o200k encoding).',
        },
      },
    },
    async (request, reply) => {
      const decoded = decodeCountTokensRequest(request.body, countTokens.decodeOptions);
      const { value: inputTokens, admission } = await countTokens.run(callerOf(request), decoded, '/v1/messages/count_tokens');
      return reply.sendAnswer({
        stream: false,
        body: jsonBody(encodeCountTokensResponse(decoded, inputTokens)),
        headers: admission.headers,
        admission,
      });
    },
  );
}
