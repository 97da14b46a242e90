/**
 * POST /v1/moderations: the moderations use case (services/moderations/) in the OpenAI wire format
 * (formats/openai-moderations; at most 1 MiB of text).
 */
import type { FastifyInstance } from 'fastify';
import { jsonBody } from '../core/generation-format.ts';
import { decodeModerationRequest, type DecodedModerationRequest } from '../formats/openai-moderations/decode-request.ts';
import { encodeModerationResponse } from '../formats/openai-moderations/encode-response.ts';
import type { ModerationsService, ModerationsWire } from '../services/moderations/moderations-service.ts';
import { callerOf } from './caller-of.ts';

/** The OpenAI moderations wire format, as the moderations service reads and writes it. */
export const openAiModerationsWire: ModerationsWire<DecodedModerationRequest> = {
  decode: decodeModerationRequest,
  encode: (model, verdicts) => jsonBody(encodeModerationResponse({ model: model.id, verdicts })),
};

export function registerModerationRoutes(app: FastifyInstance, moderations: Pick<ModerationsService, 'run'>): void {
  app.post(
    '/v1/moderations',
    {
      config: {
        switchyard: {
          permission: 'moderations',
          limits: 'tokens',
          summary: 'Classify texts for hate, self-harm, sexual and violent content.',
        },
      },
    },
    async (request, reply) => reply.sendAnswer(await moderations.run(callerOf(request), request.body)),
  );
}
