/**
 * POST /v1/chat/completions: decode (formats/openai-chat), admit against the caller's token limits,
 * generate (services/generation, metered by the admission), encode as a `chat.completion` JSON body or
 * as `chat.completion.chunk` server-sent events.
 *
 * Errors before the answer starts (bad request, unknown model, missing capability, every upstream
 * attempt failed) reject `generation.stream()` / `generate()` and reach the client as a normal JSON
 * error with its status; once streaming, a failure ends the stream with an `error` chunk.
 */
import type { FastifyInstance } from 'fastify';
import { assembleResult } from '../core/assemble-result.ts';
import { decodeChatCompletionRequest } from '../formats/openai-chat/decode-request.ts';
import { createChatCompletionContext, encodeChatCompletion } from '../formats/openai-chat/encode-response.ts';
import { encodeChatCompletionStream } from '../formats/openai-chat/encode-stream.ts';
import type { GenerationStreamOptions } from '../services/generation/generation-service.ts';
import { startMeteredGeneration, type GenerationRouteServices } from './metered-generation.ts';

/** Response header listing valid request parameters this service did not honour (comma-separated wire names). */
export const IGNORED_PARAMETERS_HEADER = 'x-switchyard-ignored-parameters';

export function registerChatCompletionRoutes(app: FastifyInstance, services: GenerationRouteServices): void {
  app.post(
    '/v1/chat/completions',
    { config: { switchyard: { permission: 'chat.completions', limits: 'tokens', summary: 'Create a chat completion (JSON, or server-sent chunks with stream: true).' } } },
    async (request, reply) => {
      const { request: generationRequest, options } = decodeChatCompletionRequest(request.body, request.decodeOptions);
      const generationOptions: GenerationStreamOptions = { signal: request.clientSignal(), requestId: request.id };
      if (options.stream) generationOptions.capabilities = ['streaming'];
      if (options.imageParam !== undefined) generationOptions.capabilityParams = { vision: options.imageParam };
      if (options.ignoredParameters.length > 0) {
        request.extraHeaders = { ...request.extraHeaders, [IGNORED_PARAMETERS_HEADER]: options.ignoredParameters.join(', ') };
        request.log.warn({ ignoredParameters: options.ignoredParameters }, 'request parameters not honoured');
      }
      const context = createChatCompletionContext(options.model);

      if (!options.stream) generationOptions.preferWholeResponse = true;
      const { parts } = await startMeteredGeneration(request, services, generationRequest, generationOptions, '/v1/chat/completions');
      if (options.stream) {
        return reply.sendEvents(encodeChatCompletionStream(parts, context, { includeUsage: options.includeUsage }));
      }
      return reply.sendData({ ...encodeChatCompletion(await assembleResult(parts), context) });
    },
  );
}
