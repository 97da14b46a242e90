/**
 * POST /v1/embeddings: the embeddings use case (services/embeddings/) in the OpenAI wire format
 * (formats/openai-embeddings). The same service answers the endpoint's batch lines.
 */
import type { FastifyInstance } from 'fastify';
import { jsonBody } from '../core/generation-format.ts';
import {
  checkEmbeddingInputTokens,
  decodeEmbeddingsRequest,
  type DecodedEmbeddingsRequest,
} from '../formats/openai-embeddings/decode-request.ts';
import { encodeEmbeddingsResponse } from '../formats/openai-embeddings/encode-response.ts';
import type { EmbeddingsService, EmbeddingsWire } from '../services/embeddings/embeddings-service.ts';
import { callerOf } from './caller-of.ts';

/** The OpenAI embeddings wire format, as the embeddings service reads and writes it. */
export const openAiEmbeddingsWire: EmbeddingsWire<DecodedEmbeddingsRequest> = {
  decode: decodeEmbeddingsRequest,
  countInputTokens: checkEmbeddingInputTokens,
  encode: (request, model, result) =>
    jsonBody(
      encodeEmbeddingsResponse({
        model: model.id,
        embeddings: result.embeddings,
        encodingFormat: request.encodingFormat,
        promptTokens: result.inputTokens,
      }),
    ),
};

export function registerEmbeddingRoutes(app: FastifyInstance, embeddings: Pick<EmbeddingsService, 'run'>): void {
  app.post(
    '/v1/embeddings',
    {
      config: {
        switchyard: { permission: 'embeddings', limits: 'tokens', summary: 'Create embedding vectors for one text or a list of texts.' },
      },
    },
    async (request, reply) => reply.sendAnswer(await embeddings.run(callerOf(request), request.body)),
  );
}
