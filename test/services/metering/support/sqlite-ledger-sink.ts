/**
 * A LedgerSink over a real SQLite file (better-sqlite3), with a small table made here: the tests'
 * stand-in for the database layer's implementation. Emits `written` after each committed batch.
 */
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import type { LedgerRecord, LedgerSink } from '../../../../src/services/metering/usage-ledger.ts';

export const CREATE_LEDGER_TABLE = `
  CREATE TABLE usage_ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    model TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    batch INTEGER NOT NULL,
    status_code INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  )`;

export class SqliteLedgerSink extends EventEmitter implements LedgerSink {
  readonly database: Database.Database;
  /** Sizes of the batches committed, in order. */
  readonly batchSizes: number[] = [];

  constructor(path: string) {
    super();
    this.database = new Database(path);
  }

  createTable(): void {
    this.database.exec(CREATE_LEDGER_TABLE);
  }

  async insertMany(records: readonly LedgerRecord[]): Promise<void> {
    // Prepared per call so that a missing table fails here, like a database that is down.
    const insert = this.database.prepare(
      `INSERT INTO usage_ledger (request_id, organization_id, key_id, model, endpoint, input_tokens, output_tokens, cached_tokens,
         reasoning_tokens, cost_usd, batch, status_code, latency_ms, created_at)
       VALUES (@requestId, @organizationId, @keyId, @model, @endpoint, @inputTokens, @outputTokens, @cachedTokens,
         @reasoningTokens, @costUsd, @batch, @statusCode, @latencyMs, @createdAtMs)`,
    );
    this.database.transaction(() => {
      for (const record of records) insert.run({ ...record, batch: record.batch ? 1 : 0 });
    })();
    this.batchSizes.push(records.length);
    this.emit('written', records.length);
  }

  requestIds(): string[] {
    return (this.database.prepare('SELECT request_id FROM usage_ledger ORDER BY id').all() as Array<{ request_id: string }>).map(
      (row) => row.request_id,
    );
  }

  close(): void {
    this.database.close();
  }
}
