/**
 * The query of `GET /v1/responses/{id}`: a stored response is answered as JSON only; `stream=true` (the
 * OpenAI API's replay as events) is refused with a 400 that says so. The query of
 * `GET /v1/responses/{id}/input_items` is `decodeInputItemsQuery` (decode-request.ts); both as one value below.
 */
import { invalidParameter } from '../../core/service-error.ts';
import { isObject } from '../shared/request-fields.ts';
import { decodeInputItemsQuery } from './decode-request.ts';

export function checkRetrieveQuery(query: unknown): void {
  const stream = isObject(query) ? query['stream'] : undefined;
  if (stream === 'true' || stream === true) {
    throw invalidParameter(
      'stream',
      "Invalid 'stream': replaying a stored response as events is not supported; retrieve it without 'stream'.",
    );
  }
}

/** The queries of the stored-response routes as one value (services/responses `StoredResponsesWire`). */
export const openAIStoredResponsesWire = { checkRetrieveQuery, decodeInputItemsQuery };
