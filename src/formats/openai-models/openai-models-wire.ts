/**
 * The OpenAI models wire format as one value (services/model-catalogue.ts `ModelsWire`), which the route
 * hands to the models use cases.
 */
import { decodeModelId, encodeModelList, toModelObject } from './model-object.ts';

export const openAIModelsWire = {
  decodeModelId,
  encodeList: encodeModelList,
  encodeModel: toModelObject,
};
