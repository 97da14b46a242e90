/**
 * The usage ledger through a database outage, on a real SQLite file with the real repository: records
 * wait in memory up to the bound, then in the journal under the data directory; when the database
 * answers again every record is written exactly once (the unique request id makes a replayed or
 * retried write a no-op), rollups included; a shutdown during the outage leaves a journal that the
 * next start writes. The outage is logged once when it starts and once when it ends.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../../src/db/database.ts';
import { FileLedgerJournal } from '../../../src/db/ledger-journal.ts';
import { UsageLedgerRepository } from '../../../src/db/repositories/usage-ledger-repository.ts';
import { UsageLedger, type LedgerRecord } from '../../../src/services/metering/usage-ledger.ts';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-ledger-outage-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** The journal's record files (its lease file aside). */
function journalFiles(journalDirectory: string): string[] {
  return readdirSync(journalDirectory).filter((name) => name.includes('.jsonl'));
}

let sequence = 0;
function record(): LedgerRecord {
  sequence++;
  return {
    requestId: `req_outage_${sequence}`,
    organizationId: 'org-outage',
    keyId: 'key_outage',
    model: 'model-a',
    endpoint: '/v1/chat/completions',
    inputTokens: 10,
    outputTokens: 5,
    cachedTokens: 0,
    reasoningTokens: 0,
    costMicroUsd: 500_000,
    costUsd: 0.5,
    batch: false,
    statusCode: 200,
    latencyMs: 12,
    createdAtMs: Date.UTC(2026, 10, 27, 12),
    deployment: null,
  };
}

class Lines {
  readonly seen: Array<{ level: string; message: string; details: Record<string, unknown> }> = [];
  warn = (details: object, message: string) => this.seen.push({ level: 'warn', message, details: details as Record<string, unknown> });
  error = (details: object, message: string) => this.seen.push({ level: 'error', message, details: details as Record<string, unknown> });
  info = (details: object, message: string) => this.seen.push({ level: 'info', message, details: details as Record<string, unknown> });
}

async function freshDatabase(name: string): Promise<Database> {
  const database = openDatabase(`sqlite:${join(directory, name, 'ledger.db')}`);
  await database.migrate();
  return database;
}

/** The database "goes away" for the ledger: its table is renamed (inserts fail as on a real outage). */
async function takeTableAway(database: Database): Promise<void> {
  await sql`ALTER TABLE usage_ledger RENAME TO usage_ledger_away`.execute(database.db);
}
async function bringTableBack(database: Database): Promise<void> {
  await sql`ALTER TABLE usage_ledger_away RENAME TO usage_ledger`.execute(database.db);
}

async function counts(database: Database): Promise<{ rows: number; distinct: number; rollupRequests: number }> {
  const rows = await sql<{
    row_count: number;
    unique_ids: number;
  }>`SELECT count(*) AS row_count, count(DISTINCT request_id) AS unique_ids FROM usage_ledger`.execute(database.db);
  const rollups = await sql<{ requests: number | null }>`SELECT sum(requests) AS requests FROM usage_daily`.execute(database.db);
  return {
    rows: Number(rows.rows[0]!.row_count),
    distinct: Number(rows.rows[0]!.unique_ids),
    rollupRequests: Number(rollups.rows[0]!.requests ?? 0),
  };
}

describe('usage ledger through a database outage', () => {
  test('memory up to the bound, then the journal; written exactly once when the database is back; logged once each way', async () => {
    const database = await freshDatabase('outage');
    const journalDirectory = join(directory, 'outage', 'ledger-journal');
    const lines = new Lines();
    const ledger = new UsageLedger({
      sink: new UsageLedgerRepository(database.db),
      flushIntervalMs: 3_600_000,
      memoryRecords: 5,
      journal: new FileLedgerJournal(journalDirectory),
      logger: lines,
    });
    try {
      await takeTableAway(database);
      for (let index = 0; index < 3; index++) ledger.record(record());
      assert.equal(await ledger.flush(), 0);
      for (let index = 0; index < 17; index++) ledger.record(record());
      await ledger.flush();
      assert.equal(ledger.pendingRecords, 5, 'memory holds the bound');
      assert.equal(journalFiles(journalDirectory).length, 1, 'the rest went to this process journal file');
      assert.equal(lines.seen.filter((line) => line.level === 'error').length, 1, 'one line when writes started failing');
      await bringTableBack(database);
      assert.equal(await ledger.flush(), 20);
      assert.deepEqual(await counts(database), { rows: 20, distinct: 20, rollupRequests: 20 });
      assert.deepEqual(journalFiles(journalDirectory), [], 'the journal is gone once written');
      assert.equal(lines.seen.at(-1)?.level, 'info');
      assert.equal(lines.seen.at(-1)?.details['journaled'], 15);
    } finally {
      await ledger.close();
      await database.close();
    }
    assert.deepEqual(readdirSync(journalDirectory), [], 'its lease is given up at close');
  });

  test('a record written twice (a retry whose first commit succeeded, a journal replayed twice) is one row and counted once', async () => {
    const database = await freshDatabase('twice');
    try {
      const repository = new UsageLedgerRepository(database.db);
      const records = [record(), record(), record()];
      await repository.insertMany(records);
      await repository.insertMany(records);
      await repository.insertMany([records[0]!, record()]);
      assert.deepEqual(await counts(database), { rows: 4, distinct: 4, rollupRequests: 4 });
      const journal = new FileLedgerJournal(join(directory, 'twice', 'ledger-journal'));
      journal.append(records);
      assert.equal(await journal.replay((batch) => repository.insertMany(batch), 2), 3);
      assert.deepEqual(await counts(database), { rows: 4, distinct: 4, rollupRequests: 4 });
      assert.equal(journal.hasRecords(), false);
    } finally {
      await database.close();
    }
  });

  test('a shutdown during the outage keeps the records in the journal; the next start writes them', async () => {
    const database = await freshDatabase('shutdown');
    const journalDirectory = join(directory, 'shutdown', 'ledger-journal');
    const lines = new Lines();
    const first = new UsageLedger({
      sink: new UsageLedgerRepository(database.db),
      flushIntervalMs: 3_600_000,
      closeAttempts: 1,
      journal: new FileLedgerJournal(journalDirectory),
      logger: lines,
    });
    await takeTableAway(database);
    for (let index = 0; index < 4; index++) first.record(record());
    await first.close();
    assert.ok(lines.seen.some((line) => line.level === 'warn' && line.details['records'] === 4));
    await bringTableBack(database);
    const second = new UsageLedger({
      sink: new UsageLedgerRepository(database.db),
      flushIntervalMs: 3_600_000,
      journal: new FileLedgerJournal(journalDirectory),
      logger: lines,
    });
    try {
      assert.equal(await second.flush(), 4, 'the journal left by the stopped ledger is written');
      assert.deepEqual(await counts(database), { rows: 4, distinct: 4, rollupRequests: 4 });
    } finally {
      await second.close();
      await database.close();
    }
  });
});
