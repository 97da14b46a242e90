/**
 * The usage ledger when the database is away AND the journal cannot be written (issue 39: a full
 * disk logged one error with a stack per request and memory grew without a bound). The journal here
 * appends to /dev/full, which fails every write with the kernel's real ENOSPC. Memory holds its bound
 * (the oldest records are dropped and counted), each state change is one log line whatever the
 * traffic, and when the database answers again what memory kept is written and the drop reported.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync } from 'node:fs';
import { UsageLedger, type LedgerJournal, type LedgerRecord, type LedgerSink } from '../../../src/services/metering/usage-ledger.ts';

let sequence = 0;
function record(): LedgerRecord {
  sequence++;
  return {
    requestId: `req_disk_full_${sequence}`,
    organizationId: 'org-disk-full',
    keyId: 'key_disk_full',
    model: 'model-a',
    endpoint: '/v1/chat/completions',
    inputTokens: 10,
    outputTokens: 5,
    cachedTokens: 0,
    reasoningTokens: 0,
    costMicroUsd: 1,
    costUsd: 0.000001,
    batch: false,
    statusCode: 200,
    latencyMs: 3,
    createdAtMs: Date.UTC(2026, 10, 29, 8),
    deployment: null,
  };
}

/** A journal on a full disk: every append fails with ENOSPC from the kernel. */
const fullDiskJournal: LedgerJournal = {
  append(records) {
    appendFileSync('/dev/full', records.map((entry) => JSON.stringify(entry)).join('\n'));
  },
  hasRecords: () => false,
  replay: async () => 0,
};

/** A database that refuses connections until `up` is set, then stores every record once. */
class Sink implements LedgerSink {
  up = false;
  readonly stored = new Map<string, LedgerRecord>();
  async insertMany(records: readonly LedgerRecord[]): Promise<void> {
    if (!this.up) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const entry of records) this.stored.set(entry.requestId, entry);
  }
}

describe('usage ledger with the database away and the disk full', { skip: !existsSync('/dev/full') && 'needs /dev/full' }, () => {
  test('memory holds its bound, one line per state change (not per request), the drop is counted and reported', async () => {
    const lines: Array<{ level: string; message: string; details: Record<string, unknown> }> = [];
    const keep = (level: string) => (details: object, message: string) =>
      lines.push({ level, message, details: details as Record<string, unknown> });
    const sink = new Sink();
    const ledger = new UsageLedger({
      sink,
      journal: fullDiskJournal,
      memoryRecords: 10,
      memoryLimitRecords: 25,
      flushIntervalMs: 60_000,
      logger: { warn: keep('warn'), error: keep('error'), info: keep('info') },
    });
    for (let index = 0; index < 5; index++) ledger.record(record());
    await ledger.flush();
    // 600 requests during the outage, and a few ticks' retries between them.
    for (let round = 0; round < 3; round++) {
      for (let index = 0; index < 200; index++) ledger.record(record());
      assert.ok(ledger.pendingRecords <= 25, `memory holds ${ledger.pendingRecords} records`);
      await ledger.flush();
    }
    assert.deepEqual(
      lines.map((line) => line.message.slice(0, 40)),
      ['usage ledger: writing records failed; th', 'usage ledger: the journal cannot be writ', 'usage ledger: neither the database nor t'],
    );
    assert.equal(ledger.droppedTotal, 605 - 25);
    sink.up = true;
    assert.equal(await ledger.flush(), 25);
    assert.equal(sink.stored.size, 25, 'what memory kept is written once');
    const last = lines.at(-1)!;
    assert.equal(lines.length, 4);
    assert.match(last.message, /writes succeed again; 580 records were dropped/);
    assert.equal(last.details['dropped'], 580);
    await ledger.close();
  });
});
