/**
 * Stored response-style responses (`store: true`): the Response object, this turn's input items, the
 * `previous_response_id` link and the owning organization. The chain of a conversation is read in one
 * round trip with a recursive query (SQLite and Postgres both speak `WITH RECURSIVE`).
 *
 * JSON columns are opaque here: the responses service writes them and is the only reader.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { StoredResponseRecord, StoredResponseRecords } from '../../services/responses/stored-response-records.ts';
import type { DatabaseSchema, StoredResponsesTable } from '../schema.ts';

// The record and the port are the responses service's (services/responses/stored-response-records.ts).
export type { StoredResponseRecord } from '../../services/responses/stored-response-records.ts';

/** Longest chain followed back from one response, turns; deeper ancestors are not read. */
export const MAX_CHAIN_DEPTH = 10_000;

function toRecord(row: Selectable<StoredResponsesTable>): StoredResponseRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    previousResponseId: row.previous_response_id,
    model: row.model,
    status: row.status,
    instructions: row.instructions === null ? null : (JSON.parse(row.instructions) as unknown),
    response: JSON.parse(row.response) as unknown,
    inputItems: JSON.parse(row.input_items) as unknown[],
    createdAt: Number(row.created_at),
  };
}

export class StoredResponsesRepository implements StoredResponseRecords {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(record: StoredResponseRecord): Promise<void> {
    const itemIds = [...new Set(record.outputItemIds ?? [])];
    if (itemIds.length === 0) {
      await this.insertResponse(this.db, record);
      return;
    }
    await this.db.transaction().execute(async (transaction) => {
      await this.insertResponse(transaction, record);
      await transaction
        .insertInto('stored_response_items')
        .values(itemIds.map((itemId) => ({ organization_id: record.organizationId, item_id: itemId, response_id: record.id })))
        // An id seen before (a client-chosen one) keeps pointing at the response that first held it.
        .onConflict((conflict) => conflict.columns(['organization_id', 'item_id']).doNothing())
        .execute();
    });
  }

  /**
   * The stored responses of `organizationId` holding any of `itemIds` among their output items (one
   * indexed query). Another organization's items are not found.
   */
  async findByItemIds(itemIds: readonly string[], organizationId: string): Promise<StoredResponseRecord[]> {
    if (itemIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('stored_responses')
      .selectAll('stored_responses')
      .where('stored_responses.organization_id', '=', organizationId)
      .where('stored_responses.id', 'in', (query) =>
        query
          .selectFrom('stored_response_items')
          .select('response_id')
          .where('organization_id', '=', organizationId)
          .where('item_id', 'in', [...itemIds]),
      )
      .execute();
    return rows.map(toRecord);
  }

  private async insertResponse(db: Kysely<DatabaseSchema>, record: StoredResponseRecord): Promise<void> {
    await db
      .insertInto('stored_responses')
      .values({
        id: record.id,
        organization_id: record.organizationId,
        previous_response_id: record.previousResponseId,
        model: record.model,
        status: record.status,
        instructions: record.instructions === null || record.instructions === undefined ? null : JSON.stringify(record.instructions),
        response: JSON.stringify(record.response),
        input_items: JSON.stringify(record.inputItems),
        created_at: record.createdAt,
      })
      .execute();
  }

  async findById(id: string): Promise<StoredResponseRecord | undefined> {
    const row = await this.db.selectFrom('stored_responses').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * The response `id` and every response it continues, OLDEST FIRST, in one query. Empty when `id` is
   * unknown. When an ancestor was deleted the chain stops below it: the first record's
   * `previousResponseId` is then not null (the caller decides what a broken chain means).
   */
  async findChain(id: string, maxDepth = MAX_CHAIN_DEPTH): Promise<StoredResponseRecord[]> {
    const result = await sql<Selectable<StoredResponsesTable> & { depth: number }>`
      WITH RECURSIVE chain (id, previous_response_id, depth) AS (
        SELECT id, previous_response_id, 0 FROM stored_responses WHERE id = ${id}
        UNION ALL
        SELECT parent.id, parent.previous_response_id, chain.depth + 1
        FROM stored_responses AS parent JOIN chain ON parent.id = chain.previous_response_id
        WHERE chain.depth < ${maxDepth}
      )
      SELECT stored.id, stored.organization_id, stored.previous_response_id, stored.model, stored.status,
             stored.instructions, stored.response, stored.input_items, stored.created_at, chain.depth
      FROM chain JOIN stored_responses AS stored ON stored.id = chain.id
      ORDER BY chain.depth DESC
    `.execute(this.db);
    return result.rows.map(toRecord);
  }

  /** Deletes the response if it belongs to `organizationId`; true when a row was deleted. */
  async delete(id: string, organizationId: string): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .deleteFrom('stored_responses')
        .where('id', '=', id)
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await transaction
        .deleteFrom('stored_response_items')
        .where('response_id', '=', id)
        .where('organization_id', '=', organizationId)
        .execute();
      return true;
    });
  }
}
