/**
 * POST /v1/messages/count_tokens, beside the message-style endpoint (POST /v1/messages is served by
 * generation-routes.ts with the Messages format). Errors carry the Anthropic top-level `"type":"error"`.
 * The count (in event-loop slices, core/count-tokens.ts) is metered like embeddings: admitted against
 * the caller's limits (it counts toward tpm and the daily and monthly totals) and recorded in the
 * ledger as the model's input tokens.
 */
import type { FastifyInstance } from 'fastify';
import { countRequestTokensAsync } from '../core/count-tokens.ts';
import { emptyUsage } from '../core/usage.ts';
import { anthropicMessagesFormat } from '../formats/anthropic-messages/anthropic-messages-format.ts';
import { encodeCountTokensResponse } from '../formats/anthropic-messages/count-tokens.ts';
import { decodeCountTokensRequest } from '../formats/anthropic-messages/decode-request.ts';
import { ledgerContextOf } from '../services/caller.ts';
import type { GenerationService } from '../services/generation/generation-service.ts';
import { callerOf } from './metering-context.ts';

export function registerMessagesRoutes(app: FastifyInstance, generation: Pick<GenerationService, 'resolve'>): void {
  app.post(
    '/v1/messages/count_tokens',
    {
      config: {
        switchyard: {
          permission: 'messages',
          limits: 'tokens',
          format: anthropicMessagesFormat,
          summary: 'Count the input tokens of a message request (local estimate with gpt-tokenizer).',
        },
      },
    },
    async (request, reply) => {
      const decoded = decodeCountTokensRequest(request.body, request.decodeOptions);
      // Unknown models are 404 and non-chat models 400 here too, as on /v1/messages.
      const { model } = generation.resolve(decoded.model, ['chat']);
      const inputTokens = await countRequestTokensAsync(decoded);
      const admission = await request.admit(inputTokens);
      await admission.settle(
        { ...emptyUsage(), inputTokens, estimated: true },
        ledgerContextOf(callerOf(request), model, '/v1/messages/count_tokens'),
      );
      return reply.sendData({ ...encodeCountTokensResponse(decoded, inputTokens) });
    },
  );
}
