/**
 * The OpenAI batches wire format as one value (batches/batch-requests.ts `BatchesWire`), which the route
 * hands to the batches use cases.
 */
import { decodeBatchListQuery } from './decode-request.ts';
import { encodeBatchList, toBatchObject } from './batch-object.ts';

export const openAIBatchesWire = {
  decodeListQuery: decodeBatchListQuery,
  encodeBatch: toBatchObject,
  encodeList: encodeBatchList,
};
