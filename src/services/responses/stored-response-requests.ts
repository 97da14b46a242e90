/**
 * The stored-response use cases of the response-style endpoint (`GET` and `DELETE /v1/responses/{id}`,
 * `GET /v1/responses/{id}/input_items`) as the routes call them: admit the request
 * (metering/admitted-request.ts), decode the query with the responses wire format (a value the route
 * hands in), and answer from the store. The stored objects are already in that format's wire shapes.
 */
import type { JsonAnswer } from '../answer.ts';
import type { Caller } from '../caller.ts';
import { answerAdmittedRequest, type RequestMetering } from '../metering/admitted-request.ts';
import type { ItemsPageQuery, StorableItem, StorableResponse, StoredResponses } from './stored-responses.ts';

/** The queries of the stored-response routes, as the responses wire format reads them. */
export interface StoredResponsesWire {
  /** Throws the format's 400 for a query the retrieve route refuses (`stream=true`). */
  checkRetrieveQuery(query: unknown): void;
  decodeInputItemsQuery(query: unknown): ItemsPageQuery;
}

/** A copy as the answer's body: the edge adds `_metadata` to the body it sends, and the store may keep its objects. */
function copyOf(value: object): Record<string, unknown> {
  return { ...value };
}

export class StoredResponseRequests<Item extends StorableItem, Response extends StorableResponse<Item>> {
  constructor(
    private readonly store: StoredResponses<Item, Response>,
    private readonly metering: RequestMetering,
    private readonly wire: StoredResponsesWire,
  ) {}

  retrieve(caller: Caller, id: string, query: unknown): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => {
      this.wire.checkRetrieveQuery(query);
      return copyOf(await this.store.retrieve(id, caller.auth.organizationId));
    });
  }

  delete(caller: Caller, id: string): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => copyOf(await this.store.delete(id, caller.auth.organizationId)));
  }

  listInputItems(caller: Caller, id: string, query: unknown): Promise<JsonAnswer> {
    return answerAdmittedRequest(this.metering, caller, async () => {
      const page = this.wire.decodeInputItemsQuery(query);
      return copyOf(await this.store.listInputItems(id, caller.auth.organizationId, page));
    });
  }
}
