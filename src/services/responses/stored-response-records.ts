/**
 * The stored responses as the responses service owns them: the record and the port it stores them
 * through (only the methods it uses). The database implements the port
 * (db/repositories/stored-responses-repository.ts); the runtime wires that in. Nothing here imports anything.
 */
export interface StoredResponseRecord {
  /** `resp_` + 48 hex. */
  id: string;
  organizationId: string;
  /** The response this one continued, or null for the first turn. */
  previousResponseId: string | null;
  model: string;
  /** Response status (`completed`, `incomplete`, `failed`). */
  status: string;
  /** The request's `instructions` (a string or a message array), or null. Not part of the chain's items. */
  instructions: unknown;
  /** The whole Response object (without `_metadata`). */
  response: unknown;
  /** This turn's input items, each with an id, in request order. */
  inputItems: unknown[];
  /** Ids of the response's output items, indexed for `item_reference` lookups (`findByItemIds`). */
  outputItemIds?: readonly string[];
  /** Milliseconds since epoch. */
  createdAt: number;
}

/** Where stored responses are kept (db/repositories/stored-responses-repository.ts implements it). */
export interface StoredResponseRecords {
  insert(record: StoredResponseRecord): Promise<void>;
  /**
   * The stored responses of `organizationId` holding any of `itemIds` among their output items (one
   * indexed query). Another organization's items are not found.
   */
  findByItemIds(itemIds: readonly string[], organizationId: string): Promise<StoredResponseRecord[]>;
  findById(id: string): Promise<StoredResponseRecord | undefined>;
  /**
   * The response `id` and every response it continues, OLDEST FIRST. Empty when `id` is unknown. When
   * an ancestor was deleted the chain stops below it: the first record's `previousResponseId` is then
   * not null (the caller decides what a broken chain means).
   */
  findChain(id: string, maxDepth?: number): Promise<StoredResponseRecord[]>;
  /** Deletes the response if it belongs to `organizationId`; true when a row was deleted. */
  delete(id: string, organizationId: string): Promise<boolean>;
}
