/**
 * The model catalogue with each model's resolved price card, for the models page.
 */
import type { FastifyPluginAsync } from 'fastify';
import { priceCardView } from '../../services/metering/price-card-view.ts';
import { access, type DashboardApiDependencies } from './common.ts';
import type { ListOf, ModelObject } from './wire.ts';

export const modelsApi: FastifyPluginAsync<DashboardApiDependencies> = async (app, { config }) => {
  app.get('/dashboard/api/models', access('member'), async (): Promise<ListOf<ModelObject>> => ({
    object: 'list',
    data: config.models.map((model) => ({
      id: model.id,
      aliases: model.aliases,
      description: model.description,
      capabilities: model.capabilities,
      context_window: model.contextWindow,
      max_output_tokens: model.maxOutputTokens,
      pricing: priceCardView(model.pricing),
    })),
  }));
};
