/**
 * The ledger journal's ownership when several instances share one data directory (two containers on
 * one volume: their process ids mean nothing to each other, and they may even share an instance id):
 * an owner token in the file names and a lease file, never a pid. A live owner's files are never
 * taken; a stopped owner's (lease released) are taken at once; a crashed owner's once its lease is
 * older than `leaseMs`; two takers at once replay each record exactly once. Real files in a temporary
 * directory.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileLedgerJournal } from '../../src/db/ledger-journal.ts';
import type { LedgerRecord } from '../../src/services/metering/usage-ledger.ts';

const root = mkdtempSync(join(tmpdir(), 'switchyard-ledger-journal-'));
after(() => rmSync(root, { recursive: true, force: true }));

let sequence = 0;
function records(count: number): LedgerRecord[] {
  return Array.from({ length: count }, () => {
    sequence++;
    return {
      requestId: `req_journal_${sequence}`,
      organizationId: 'org-journal',
      keyId: 'key_journal',
      model: 'model-a',
      endpoint: '/v1/chat/completions',
      status: 200,
      inputTokens: 1,
      outputTokens: 1,
      costMicros: 0,
      createdAt: Date.now(),
    } as unknown as LedgerRecord;
  });
}

/** A sink that keeps the request ids it was given. */
function sink(): { ids: string[]; write: (batch: readonly LedgerRecord[]) => Promise<void> } {
  const ids: string[] = [];
  return { ids, write: async (batch) => void ids.push(...batch.map((record) => record.requestId)) };
}

/** Ages every lease in `directory` past `ms` (an owner that crashed that long ago). */
function ageLeases(directory: string, ms: number): void {
  const past = new Date(Date.now() - ms);
  for (const name of readdirSync(directory)) if (name.endsWith('.lease')) utimesSync(join(directory, name), past, past);
}

test('two instances sharing a directory and an instance id: a live owner’s journal is never taken; once it stops, it is replayed exactly once', async () => {
  const directory = join(root, 'shared');
  const a = new FileLedgerJournal(directory, { instanceId: 'inst-1', leaseMs: 60_000 });
  const b = new FileLedgerJournal(directory, { instanceId: 'inst-1', leaseMs: 60_000 });
  assert.notEqual(a.ownerToken, b.ownerToken, 'an owner token per journal, even with one instance id');
  const written = records(5);
  a.append(written);
  const taker = sink();
  assert.equal(b.hasRecords(), true);
  assert.equal(await b.replay(taker.write, 2), 0, 'a live owner’s file stays its own');
  assert.deepEqual(taker.ids, []);

  a.release();
  assert.equal(await b.replay(taker.write, 2), 5);
  assert.deepEqual(
    taker.ids,
    written.map((record) => record.requestId),
  );
  assert.equal(await b.replay(taker.write, 2), 0, 'replayed once');
  b.release();
  assert.deepEqual(readdirSync(directory), [], 'nothing left: files replayed, leases released');
});

test('an owner that crashed: its files are taken once its lease is older than leaseMs; two takers at once write each record once', async () => {
  const directory = join(root, 'crashed');
  const crashed = new FileLedgerJournal(directory, { instanceId: 'inst-9', leaseMs: 60_000 });
  const lost = [...records(7)];
  crashed.append(lost.slice(0, 4));
  crashed.append(lost.slice(4));
  const b = new FileLedgerJournal(directory, { instanceId: 'inst-2', leaseMs: 60_000 });
  const c = new FileLedgerJournal(directory, { instanceId: 'inst-3', leaseMs: 60_000 });
  const taken = sink();
  assert.equal(await b.replay(taken.write, 3), 0, 'a lease 0 s old is live');
  crashed.release(); // stops its timer; the lease file is written again below, as a crash would leave it
  writeFileSync(join(directory, `${crashed.ownerToken}.lease`), '{}\n');
  ageLeases(directory, 61_000);
  const [byB, byC] = await Promise.all([b.replay(taken.write, 3), c.replay(taken.write, 3)]);
  assert.equal(byB + byC, 7);
  assert.deepEqual([...taken.ids].sort(), lost.map((record) => record.requestId).sort(), 'each record exactly once');
  b.release();
  c.release();
  assert.deepEqual(readdirSync(directory), [], 'the dead owner’s lease is forgotten with its last file');
});

test('a taker that died half-way: the file it took is taken again once its lease lapses; its own append goes to a new file meanwhile', async () => {
  const directory = join(root, 'taker');
  const owner = new FileLedgerJournal(directory, { instanceId: 'inst-1', leaseMs: 60_000 });
  owner.append(records(3));
  owner.release();
  const taker = new FileLedgerJournal(directory, { instanceId: 'inst-2', leaseMs: 60_000 });
  await assert.rejects(
    taker.replay(async () => {
      throw new Error('database away');
    }, 10),
  );
  const next = new FileLedgerJournal(directory, { instanceId: 'inst-3', leaseMs: 60_000 });
  const written = sink();
  assert.equal(await next.replay(written.write, 10), 0, 'the taker lives: its taken file stays its own');
  ageLeases(directory, 61_000);
  assert.equal(await next.replay(written.write, 10), 3);
  assert.equal(written.ids.length, 3);
  next.release();
  taker.release();
  assert.deepEqual(readdirSync(directory), []);
});

test('files of the earlier naming (<ms>-<pid>.jsonl) are replayed once untouched for leaseMs', async () => {
  const directory = join(root, 'legacy');
  const journal = new FileLedgerJournal(directory, { instanceId: 'inst-1', leaseMs: 60_000 });
  const old = records(2);
  mkdirSync(directory, { recursive: true });
  const legacy = join(directory, `${Date.now()}-12345.jsonl`);
  writeFileSync(legacy, old.map((record) => JSON.stringify(record)).join('\n') + '\n');
  const written = sink();
  assert.equal(await journal.replay(written.write, 10), 0, 'recently written: maybe a live process of the old version');
  const past = new Date(Date.now() - 61_000);
  utimesSync(legacy, past, past);
  assert.equal(await journal.replay(written.write, 10), 2);
  journal.release();
  assert.deepEqual(readdirSync(directory), []);
});
