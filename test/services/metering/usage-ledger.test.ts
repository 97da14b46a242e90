/**
 * The usage ledger buffer against a real SQLite file (better-sqlite3, table made by the test).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLedgerRecord, UsageLedger, type LedgerLogger, type LedgerRecord } from '../../../src/services/metering/usage-ledger.ts';
import { SqliteLedgerSink } from './support/sqlite-ledger-sink.ts';
import { TYPESCRIPT_LOADER } from '../../support/typescript-loader.ts';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-ledger-'));
let fileCounter = 0;
const sinks: SqliteLedgerSink[] = [];
const ledgers: UsageLedger[] = [];

after(async () => {
  // Ledgers a test left open (on failure) must not keep timers; their sinks may be closed already.
  await Promise.allSettled(ledgers.map((ledger) => ledger.close()));
  for (const sink of sinks) if (sink.database.open) sink.close();
  rmSync(directory, { recursive: true, force: true });
});

function newSink(options: { withTable: boolean } = { withTable: true }): SqliteLedgerSink {
  fileCounter += 1;
  const sink = new SqliteLedgerSink(join(directory, `ledger-${fileCounter}.db`));
  if (options.withTable) sink.createTable();
  sinks.push(sink);
  return sink;
}

function newLedger(...args: ConstructorParameters<typeof UsageLedger>): UsageLedger {
  const ledger = new UsageLedger(...args);
  ledgers.push(ledger);
  return ledger;
}

class CapturingLogger implements LedgerLogger {
  readonly entries: Array<{ level: 'warn' | 'error' | 'info'; details: Record<string, unknown>; message: string }> = [];
  info(details: object, message: string): void {
    this.entries.push({ level: 'info', details: details as Record<string, unknown>, message });
  }
  warn(details: object, message: string): void {
    this.entries.push({ level: 'warn', details: details as Record<string, unknown>, message });
  }
  error(details: object, message: string): void {
    this.entries.push({ level: 'error', details: details as Record<string, unknown>, message });
  }
}

/**
 * The ledger's timer is unref'd (it must not keep a server process alive by itself), so a test that
 * waits for a timed write holds the event loop open meanwhile.
 */
async function keepingAlive<T>(promise: Promise<T>): Promise<T> {
  const holder = setInterval(() => {}, 1000);
  try {
    return await promise;
  } finally {
    clearInterval(holder);
  }
}

function sampleRecord(index: number): LedgerRecord {
  return createLedgerRecord({
    requestId: `req_${index}`,
    organizationId: 'org-test',
    keyId: 'key-test',
    model: 'gpt-test',
    endpoint: '/v1/chat/completions',
    usage: {
      inputTokens: 1000,
      cachedInputTokens: 200,
      cacheWriteInputTokens: 0,
      cacheWrite1hInputTokens: 0,
      outputTokens: 500,
      reasoningTokens: 100,
      requests: 1,
      estimated: false,
    },
    pricing: { inputPerMillion: 2, outputPerMillion: 8 },
    batch: index % 2 === 1,
    statusCode: 200,
    latencyMs: 42 + index,
    createdAtMs: Date.UTC(2025, 5, 15, 10, 0, 0) + index,
  });
}

describe('UsageLedger', () => {
  test('writes a batch as soon as maxBatchRecords are waiting, with every field', async () => {
    const sink = newSink();
    const ledger = newLedger({ sink, flushIntervalMs: 3_600_000, maxBatchRecords: 5 });
    const written = once(sink, 'written');
    for (let index = 0; index < 5; index++) ledger.record(sampleRecord(index));
    assert.deepEqual(await written, [5]);
    assert.equal(ledger.pendingRecords, 0);
    const row = sink.database.prepare('SELECT * FROM usage_ledger WHERE request_id = ?').get('req_1');
    assert.deepEqual(row, {
      id: 2,
      request_id: 'req_1',
      organization_id: 'org-test',
      key_id: 'key-test',
      model: 'gpt-test',
      endpoint: '/v1/chat/completions',
      input_tokens: 1000,
      output_tokens: 500,
      cached_tokens: 200,
      reasoning_tokens: 100,
      cost_usd: 0.003, // (1000 * 2 + 500 * 8) / 1e6 = 0.006, batch: half
      batch: 1,
      status_code: 200,
      latency_ms: 43,
      created_at: Date.UTC(2025, 5, 15, 10, 0, 0) + 1,
    });
    await ledger.close();
  });

  test('writes on the timer when fewer than maxBatchRecords wait', async () => {
    const sink = newSink();
    const ledger = newLedger({ sink, flushIntervalMs: 20, maxBatchRecords: 1000 });
    const written = once(sink, 'written');
    for (let index = 0; index < 3; index++) ledger.record(sampleRecord(index));
    assert.equal(ledger.pendingRecords, 3, 'recording never writes synchronously');
    assert.deepEqual(await keepingAlive(written), [3]);
    assert.deepEqual(sink.requestIds(), ['req_0', 'req_1', 'req_2']);
    await ledger.close();
  });

  test('close writes everything, in order, in batches of maxBatchRecords', async () => {
    const sink = newSink();
    const ledger = newLedger({ sink, flushIntervalMs: 3_600_000, maxBatchRecords: 4 });
    for (let index = 0; index < 10; index++) ledger.record(sampleRecord(index));
    await ledger.close();
    assert.deepEqual(
      sink.requestIds(),
      Array.from({ length: 10 }, (_, index) => `req_${index}`),
    );
    assert.ok(sink.batchSizes.every((size) => size <= 4));
    assert.equal(ledger.pendingRecords, 0);
    await ledger.close(); // idempotent
  });

  test('a failed write keeps the records, logs, and a later flush writes them', async () => {
    const sink = newSink({ withTable: false });
    const logger = new CapturingLogger();
    const ledger = newLedger({ sink, flushIntervalMs: 3_600_000, logger });
    for (let index = 0; index < 3; index++) ledger.record(sampleRecord(index));
    assert.equal(await ledger.flush(), 0);
    assert.equal(ledger.pendingRecords, 3);
    assert.equal(logger.entries.length, 1);
    assert.equal(logger.entries[0]?.level, 'error');
    assert.equal(logger.entries[0]?.details.pendingRecords, 3);
    assert.match(String(logger.entries[0]?.details.err), /no such table/);
    sink.createTable();
    ledger.record(sampleRecord(3));
    assert.equal(await ledger.flush(), 4);
    assert.deepEqual(sink.requestIds(), ['req_0', 'req_1', 'req_2', 'req_3']);
    await ledger.close();
  });

  test('after a failure the timer retries until the database is back', async () => {
    const sink = newSink({ withTable: false });
    const logger = new CapturingLogger();
    const ledger = newLedger({ sink, flushIntervalMs: 10, logger });
    ledger.record(sampleRecord(0));
    ledger.record(sampleRecord(1));
    while (logger.entries.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    // Several failed ticks: the outage is logged once, not once per tick.
    await keepingAlive(new Promise((resolve) => setTimeout(resolve, 60)));
    assert.equal(logger.entries.length, 1);
    const written = once(sink, 'written');
    sink.createTable();
    assert.deepEqual(await keepingAlive(written), [2]);
    assert.deepEqual(sink.requestIds(), ['req_0', 'req_1']);
    while (logger.entries.length < 2) await keepingAlive(new Promise((resolve) => setTimeout(resolve, 5)));
    assert.equal(logger.entries[1]?.level, 'info', 'the end of the outage is logged once');
    await ledger.close();
  });

  test('close against a sink that keeps failing logs every record in full and rejects', async () => {
    const sink = newSink({ withTable: false });
    const logger = new CapturingLogger();
    const ledger = newLedger({ sink, flushIntervalMs: 3_600_000, closeAttempts: 2, closeRetryDelayMs: 1, logger });
    ledger.record(sampleRecord(0));
    ledger.record(sampleRecord(1));
    await assert.rejects(ledger.close(), /2 records could not be written/);
    const logged = logger.entries
      .filter((entry) => entry.details.record !== undefined)
      .map((entry) => entry.details.record as LedgerRecord);
    assert.deepEqual(logged, [sampleRecord(0), sampleRecord(1)]);
    ledger.record(sampleRecord(2));
    assert.deepEqual(logger.entries.at(-1)?.details.record, sampleRecord(2), 'a record after shutdown is logged, not dropped');
    assert.equal(ledger.pendingRecords, 0);
  });

  test('a crash loses only the records buffered since the last write', async () => {
    const path = join(directory, 'crash.db');
    const setup = new SqliteLedgerSink(path);
    setup.createTable();
    setup.close();
    const script = fileURLToPath(new URL('./support/crash-ledger.ts', import.meta.url));
    const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, script, path, '20', '7'], { stdio: 'inherit' });
    const [, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    assert.equal(signal, 'SIGKILL');
    const check = new SqliteLedgerSink(path);
    sinks.push(check);
    assert.deepEqual(
      check.requestIds(),
      Array.from({ length: 20 }, (_, index) => `req_${index}`),
    );
  });
});
