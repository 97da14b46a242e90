/**
 * The wire Model object of `GET /v1/models` and `GET /v1/models/{model}` (SPEC "Model"), each entry with
 * its resolved price card (`pricing`, a field the SDKs ignore), and the model id of the retrieve path.
 */

/** What the wire shows of a catalogue model (the models use case gathers it from the config). */
export interface CatalogueModelFacts<Pricing> {
  id: string;
  /** Unix seconds. */
  created: number;
  ownedBy: string;
  description: string;
  capabilities: readonly string[];
  /** What the model costs, as resolved at config load (README "Prices"). */
  pricing: Pricing;
}

export type ModelObject<Pricing> = {
  id: string;
  object: 'model';
  /** Unix seconds. */
  created: number;
  owned_by: string;
  description: string;
  capabilities: string[];
  pricing: Pricing;
};

export function toModelObject<Pricing>(model: CatalogueModelFacts<Pricing>): ModelObject<Pricing> {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.ownedBy,
    description: model.description,
    capabilities: [...model.capabilities],
    pricing: model.pricing,
  };
}

/** The `list` of `GET /v1/models`: each entry also carries the legacy `permission`, `root` and `parent`. */
export function encodeModelList<Pricing>(models: readonly CatalogueModelFacts<Pricing>[]): Record<string, unknown> {
  return {
    object: 'list',
    data: models.map((model) => ({ ...toModelObject(model), permission: [], root: model.id, parent: null })),
  };
}

/**
 * The model id of `GET /v1/models/{model}`, taken from a wildcard so that ids containing `/` work
 * percent-encoded or not. Text that is not valid percent-encoding is looked up raw (and then fails as unknown).
 */
export function decodeModelId(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
