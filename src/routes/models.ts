/**
 * GET /v1/models and GET /v1/models/{model}: the catalogue use cases (services/model-catalogue.ts) in the
 * OpenAI models wire format (formats/openai-models). The id is taken from a wildcard so that ids
 * containing `/` work percent-encoded or not.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.ts';
import { openAIModelsWire } from '../formats/openai-models/openai-models-wire.ts';
import type { RequestMetering } from '../services/metering/admitted-request.ts';
import { ModelCatalogue } from '../services/model-catalogue.ts';
import { callerOf } from './caller-of.ts';

export function registerModelRoutes(app: FastifyInstance, config: Config, metering: RequestMetering): void {
  const catalogue = new ModelCatalogue(config, metering, openAIModelsWire);
  app.get(
    '/v1/models',
    { config: { switchyard: { permission: 'models', summary: 'List the models this server serves.' } } },
    async (request, reply) => reply.sendAnswer(await catalogue.list(callerOf(request))),
  );

  app.get<{ Params: { '*': string } }>(
    '/v1/models/*',
    { config: { switchyard: { permission: 'models', summary: 'Retrieve one model by id or alias.', openapiPath: '/v1/models/{model}' } } },
    async (request, reply) => reply.sendAnswer(await catalogue.retrieve(callerOf(request), request.params['*'])),
  );
}
