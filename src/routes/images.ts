/**
 * POST /v1/images/generations: the image-generation use case (services/images/) in the OpenAI wire
 * format (formats/openai-images). Links in `url` results use the request's public origin.
 */
import type { FastifyInstance } from 'fastify';
import { jsonBody } from '../core/generation-format.ts';
import {
  decodeImageGenerationRequest,
  resolveImageSize,
  type DecodedImageGenerationRequest,
} from '../formats/openai-images/decode-request.ts';
import { encodeImagesResponse } from '../formats/openai-images/encode-response.ts';
import type { ImagesService, ImagesWire } from '../services/images/images-service.ts';
import { callerOf } from './caller-of.ts';

/** The OpenAI images wire format, as the images service reads and writes it. */
export const openAiImagesWire: ImagesWire<DecodedImageGenerationRequest> = {
  decode: (body) => decodeImageGenerationRequest(body),
  resolveSize: resolveImageSize,
  encode: (images) => jsonBody(encodeImagesResponse({ images })),
};

export function registerImageRoutes(app: FastifyInstance, images: Pick<ImagesService, 'run'>): void {
  app.post(
    '/v1/images/generations',
    {
      config: {
        switchyard: {
          permission: 'images',
          limits: 'tokens',
          summary: 'Generate images from a text prompt (PNG, as base64 or a signed link).',
        },
      },
    },
    async (request, reply) => {
      const answer = await images.run(callerOf(request), request.body, () => request.publicOrigin());
      if (answer.ignoredParameters.length > 0)
        request.log.warn({ ignoredParameters: answer.ignoredParameters }, 'request parameters not honoured');
      return reply.sendAnswer(answer);
    },
  );
}
