/**
 * Stored conversations of the response-style endpoint (docs/wire-contracts.md "Responses":
 * `previous_response_id`; OpenAI OpenAPI `GET/DELETE /responses/{id}` and `/responses/{id}/input_items`).
 *
 * With `store: true` a response is saved with this turn's input items, the link to the response it
 * continued, the caller's organization and its instructions. Continuing a conversation loads the whole
 * chain in one query and prepends, oldest first, every earlier turn's input items and output items (not
 * its instructions). Responses are visible only to their own organization; another organization's id
 * is answered exactly like an unknown one.
 */
import { invalidParameter, notFound } from '../../core/service-error.ts';
import type { StoredResponseRecord, StoredResponseRecords } from './stored-response-records.ts';

/** What the store needs of a conversation item (formats/openai-responses `ResponseItem` is one). */
export interface StorableItem {
  /** `msg_...`, `fc_...`, `fco_...`, `rs_...`: the cursor of `input_items` pages. */
  id: string;
}

/** What the store needs of a Response object (formats/openai-responses `ResponseObject` is one). */
export interface StorableResponse<Item extends StorableItem> {
  /** `resp_` + 48 hex. */
  id: string;
  previous_response_id: string | null;
  model: string;
  status: string;
  /** The request's instructions (kept with the response, never carried over to later turns). */
  instructions: unknown;
  output: Item[];
}

/** Query of an `input_items` page (formats/openai-responses `decodeInputItemsQuery` produces it). */
export interface ItemsPageQuery {
  /** Item id to list after, or null for the first page. */
  after: string | null;
  /** Page size, 1-100. */
  limit: number;
  order: 'asc' | 'desc';
}

/** A cursor page (docs/wire-contracts.md "List pagination"). */
export interface ItemsPage<Item extends StorableItem> {
  object: 'list';
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface SaveResponseInput<Item extends StorableItem, Response extends StorableResponse<Item>> {
  /** The final Response object (completed, incomplete or failed), without `_metadata`. */
  response: Response;
  /** This turn's input items, each with an id. */
  inputItems: readonly Item[];
  /** Owner: the caller's organization (`request.auth.organizationId`). */
  organizationId: string;
}

export class StoredResponses<Item extends StorableItem, Response extends StorableResponse<Item>> {
  constructor(
    private readonly repository: StoredResponseRecords,
    /** Milliseconds since epoch (injected in tests). */
    private readonly now: () => number = Date.now,
  ) {}

  async save(input: SaveResponseInput<Item, Response>): Promise<void> {
    const { response } = input;
    await this.repository.insert({
      id: response.id,
      organizationId: input.organizationId,
      previousResponseId: response.previous_response_id,
      model: response.model,
      status: response.status,
      instructions: response.instructions,
      response,
      inputItems: [...input.inputItems],
      outputItemIds: response.output.map((item) => item.id),
      createdAt: this.now(),
    });
  }

  /**
   * `item_reference` lookup: the stored output items of `organizationId` with any of `ids`, by id.
   * Ids of another organization or unknown ids are simply absent (the caller names the param in its 400).
   */
  async findItems(ids: readonly string[], organizationId: string): Promise<Map<string, Item>> {
    const wanted = new Set(ids);
    const found = new Map<string, Item>();
    for (const record of await this.repository.findByItemIds([...wanted], organizationId)) {
      for (const item of this.responseOf(record).output) if (wanted.has(item.id) && !found.has(item.id)) found.set(item.id, item);
    }
    return found;
  }

  /**
   * The items to prepend when continuing `previousResponseId`: for every turn of its chain, oldest
   * first, the turn's input items then its output items. 400 `invalid_parameter` (param
   * `previous_response_id`) when the response is unknown, was not stored, belongs to another
   * organization, or an earlier response of its chain was deleted.
   */
  async loadHistory(previousResponseId: string, organizationId: string): Promise<Item[]> {
    const chain = await this.repository.findChain(previousResponseId);
    const newest = chain.at(-1);
    if (newest === undefined || newest.id !== previousResponseId || chain.some((record) => record.organizationId !== organizationId)) {
      throw invalidParameter(
        'previous_response_id',
        `Previous response with id '${previousResponseId}' not found. Only responses created with 'store: true' by your organization can be continued.`,
      );
    }
    const oldest = chain[0]!;
    if (oldest.previousResponseId !== null) {
      throw invalidParameter(
        'previous_response_id',
        `The conversation of '${previousResponseId}' cannot be continued: its earlier response '${oldest.previousResponseId}' was deleted.`,
      );
    }
    const items: Item[] = [];
    for (const record of chain) items.push(...this.inputItemsOf(record), ...this.responseOf(record).output);
    return items;
  }

  /** `GET /v1/responses/{id}`: the stored Response object; 404 `response_not_found` otherwise. */
  async retrieve(id: string, organizationId: string): Promise<Response> {
    return this.responseOf(await this.find(id, organizationId));
  }

  /** `DELETE /v1/responses/{id}`; 404 `response_not_found` when there is nothing to delete. */
  async delete(id: string, organizationId: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    if (!(await this.repository.delete(id, organizationId))) throw responseNotFound(id);
    return { id, object: 'response', deleted: true };
  }

  /**
   * `GET /v1/responses/{id}/input_items`: this turn's input items as a cursor page (docs/wire-contracts.md
   * "List pagination"). `after` must be the id of an item of this response (400 otherwise).
   */
  async listInputItems(id: string, organizationId: string, query: ItemsPageQuery): Promise<ItemsPage<Item>> {
    const items = this.inputItemsOf(await this.find(id, organizationId));
    const ordered = query.order === 'asc' ? items : [...items].reverse();
    let start = 0;
    if (query.after !== null) {
      const position = ordered.findIndex((item) => item.id === query.after);
      if (position < 0)
        throw invalidParameter('after', `Invalid 'after': '${query.after}' is not the id of an input item of response '${id}'.`);
      start = position + 1;
    }
    const data = ordered.slice(start, start + query.limit);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: start + data.length < ordered.length,
    };
  }

  private async find(id: string, organizationId: string): Promise<StoredResponseRecord> {
    const record = await this.repository.findById(id);
    if (record === undefined || record.organizationId !== organizationId) throw responseNotFound(id);
    return record;
  }

  // The JSON columns are written only by `save` above, from these same types.
  private responseOf(record: StoredResponseRecord): Response {
    return record.response as Response;
  }

  private inputItemsOf(record: StoredResponseRecord): Item[] {
    return record.inputItems as Item[];
  }
}

function responseNotFound(id: string) {
  return notFound('response_not_found', `Response with id '${id}' not found.`, 'response_id');
}
