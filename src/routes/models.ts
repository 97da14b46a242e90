/**
 * GET /v1/models and GET /v1/models/{model}: the catalogue from the config (SPEC "Model"), each entry
 * with its resolved price card (`pricing`, services/metering/price-card-view.ts; a field the SDKs ignore).
 * The id is taken from a wildcard so that ids containing `/` work percent-encoded or not.
 */
import { didYouMean } from '../core/closest-name.ts';
import type { FastifyInstance } from 'fastify';
import type { Config, ModelConfig } from '../config/index.ts';
import { stableCreatedSeconds } from '../config/index.ts';
import { notFound } from '../core/service-error.ts';
import { priceCardView, type PriceCardView } from '../services/metering/price-card-view.ts';

export interface CatalogueEntry {
  id: string;
  object: 'model';
  /** Unix seconds. */
  created: number;
  owned_by: string;
  description: string;
  capabilities: string[];
  /** What the model costs, as resolved at config load (README "Prices"). */
  pricing: PriceCardView;
}

function catalogueEntry(model: ModelConfig, config: Config): CatalogueEntry {
  return {
    id: model.id,
    object: 'model',
    // loadConfig gives every model a `created` (derived from its id when the config names none).
    created: model.created ?? stableCreatedSeconds(model.id),
    owned_by: model.ownedBy ?? config.operator,
    description: model.description,
    capabilities: [...model.capabilities],
    pricing: priceCardView(model.pricing),
  };
}

export function registerModelRoutes(app: FastifyInstance, config: Config): void {
  const byName = new Map<string, ModelConfig>();
  for (const model of config.models) for (const name of [model.id, ...model.aliases]) byName.set(name, model);
  const list = config.models.map((model) => ({
    ...catalogueEntry(model, config),
    permission: [],
    root: model.id,
    parent: null,
  }));

  app.get(
    '/v1/models',
    { config: { switchyard: { permission: 'models', summary: 'List the models this server serves.' } } },
    async (_request, reply) => reply.sendData({ object: 'list', data: list }),
  );

  app.get<{ Params: { '*': string } }>(
    '/v1/models/*',
    { config: { switchyard: { permission: 'models', summary: 'Retrieve one model by id or alias.', openapiPath: '/v1/models/{model}' } } },
    async (request, reply) => {
      let name = request.params['*'];
      try {
        name = decodeURIComponent(name);
      } catch {
        // Not valid percent-encoding: look the raw text up, which then fails as unknown.
      }
      const model = byName.get(name);
      if (model === undefined)
        throw notFound(
          'model_not_found',
          `The model '${name}' does not exist.${didYouMean(name, byName.keys())} GET /v1/models lists the models.`,
          'model',
        );
      return reply.sendData({ ...catalogueEntry(model, config) });
    },
  );
}
