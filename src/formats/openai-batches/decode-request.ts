/**
 * The query of `GET /v1/batches`: cursor `after`, `limit` 1-100 (default 20), optional `status` filter.
 * The create body is checked by the batch service (batches/batch-service.ts), which owns its rules.
 */
import { isObject } from '../shared/request-fields.ts';
import { decodeListLimit, optionalQueryText } from '../shared/list-page.ts';

export interface BatchListQuery {
  after?: string;
  limit: number;
  /** As the client sent it; an unknown status matches no batch. */
  status?: string;
}

export function decodeBatchListQuery(query: unknown): BatchListQuery {
  const values = isObject(query) ? query : {};
  const after = optionalQueryText(values['after']);
  const status = optionalQueryText(values['status']);
  return {
    limit: decodeListLimit(values['limit'], 100, 20),
    ...(after === undefined ? {} : { after }),
    ...(status === undefined ? {} : { status }),
  };
}
