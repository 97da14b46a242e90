/**
 * One route registration serves every text-generation endpoint (chat completions, messages,
 * responses): the handler turns the Fastify request into a plain caller, runs the endpoint
 * (services/generation/run-generation-endpoint.ts) and hands its answer (JSON body or events) to the edge.
 *
 * Errors before the answer starts (bad request, unknown model, missing capability, limits, every
 * upstream attempt failed) reach the client as a JSON error with its status, wrapped the way the
 * format's clients read errors; once streaming, a failure ends the stream with the format's error event.
 */
import type { FastifyInstance } from 'fastify';
import type { MeteredGenerations } from '../services/generation/metered-generations.ts';
import { callerOf } from './caller-of.ts';
import { runGenerationEndpoint, type GenerationEndpoint } from '../services/generation/run-generation-endpoint.ts';

export function registerGenerationRoute(app: FastifyInstance, endpoint: GenerationEndpoint, generations: MeteredGenerations): void {
  const { format } = endpoint;
  app.post(
    endpoint.path,
    { config: { switchyard: { permission: endpoint.permission, limits: 'tokens', summary: endpoint.summary, format } } },
    async (request, reply) => {
      const answer = await runGenerationEndpoint(endpoint, callerOf(request), request.body, generations);
      if (answer.ignoredParameters.length > 0)
        request.log.warn({ ignoredParameters: answer.ignoredParameters }, 'request parameters not honoured');
      return reply.sendAnswer(answer);
    },
  );
}
