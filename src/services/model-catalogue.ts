/**
 * `GET /v1/models` and `GET /v1/models/{model}` as use cases: admit the request
 * (metering/admitted-request.ts), then answer the catalogue from the config in the models wire format
 * (formats/openai-models, a value the route hands in), each entry with its resolved price card
 * (metering/price-card-view.ts). An unknown id is a 404 that names the closest known one.
 */
import { stableCreatedSeconds, type Config, type ModelConfig } from '../config/index.ts';
import { didYouMean } from '../core/closest-name.ts';
import { notFound } from '../core/service-error.ts';
import type { JsonAnswer } from './answer.ts';
import type { Caller } from './caller.ts';
import { answerAdmittedRequest, type RequestMetering } from './metering/admitted-request.ts';
import { priceCardView, type PriceCardView } from './metering/price-card-view.ts';

/** What the wire shows of a catalogue model. */
export interface CatalogueModel {
  id: string;
  /** Unix seconds. */
  created: number;
  ownedBy: string;
  description: string;
  capabilities: readonly string[];
  pricing: PriceCardView;
}

/** The models wire format, as these use cases read and write it. */
export interface ModelsWire {
  /** The model id of the retrieve path (the wildcard's text). */
  decodeModelId(path: string): string;
  encodeList(models: readonly CatalogueModel[]): Record<string, unknown>;
  encodeModel(model: CatalogueModel): Record<string, unknown>;
}

function catalogueModel(model: ModelConfig, config: Config): CatalogueModel {
  return {
    id: model.id,
    // loadConfig gives every model a `created` (derived from its id when the config names none).
    created: model.created ?? stableCreatedSeconds(model.id),
    ownedBy: model.ownedBy ?? config.operator,
    description: model.description,
    capabilities: model.capabilities,
    pricing: priceCardView(model.pricing),
  };
}

export class ModelCatalogue {
  private readonly byName = new Map<string, ModelConfig>();
  /** The list answer's entries, built once (the config does not change while the server runs). */
  private readonly listBody: Record<string, unknown>;

  constructor(
    private readonly config: Config,
    private readonly metering: RequestMetering,
    private readonly wire: ModelsWire,
  ) {
    for (const model of config.models) for (const name of [model.id, ...model.aliases]) this.byName.set(name, model);
    this.listBody = wire.encodeList(config.models.map((model) => catalogueModel(model, config)));
  }

  list(caller: Caller): Promise<JsonAnswer> {
    // A shallow copy: the edge adds `_metadata` to the body it sends.
    return answerAdmittedRequest(this.metering, caller, async () => ({ ...this.listBody }));
  }

  retrieve(caller: Caller, path: string): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => {
      const name = this.wire.decodeModelId(path);
      const model = this.byName.get(name);
      if (model === undefined)
        throw notFound(
          'model_not_found',
          `The model '${name}' does not exist.${didYouMean(name, this.byName.keys())} GET /v1/models lists the models.`,
          'model',
        );
      return this.wire.encodeModel(catalogueModel(model, this.config));
    });
  }
}
