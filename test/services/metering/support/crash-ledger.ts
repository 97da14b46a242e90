/**
 * Crash drill for the usage ledger: buffers `written` records and waits until they are committed to
 * the SQLite file, buffers `buffered` more, then kills itself with SIGKILL (no shutdown hook runs).
 * The test then counts what reached the file.
 *
 * Usage: node --import tsx test/services/metering/support/crash-ledger.ts <sqlite path> <written> <buffered>
 */
import { UsageLedger } from '../../../../src/services/metering/usage-ledger.ts';
import { SqliteLedgerSink } from './sqlite-ledger-sink.ts';

const [path = '', writtenText = '0', bufferedText = '0'] = process.argv.slice(2);
const sink = new SqliteLedgerSink(path);
const ledger = new UsageLedger({ sink, flushIntervalMs: 60_000, maxBatchRecords: 100 });
const record = (index: number) => ({
  requestId: `req_${index}`,
  organizationId: 'org-crash',
  keyId: 'key-crash',
  model: 'model',
  endpoint: '/v1/chat/completions',
  inputTokens: 1,
  outputTokens: 1,
  cachedTokens: 0,
  reasoningTokens: 0,
  costMicroUsd: 0,
  costUsd: 0,
  batch: false,
  statusCode: 200,
  latencyMs: 1,
  createdAtMs: 0,
});
const written = Number(writtenText);
for (let index = 0; index < written; index++) ledger.record(record(index));
await ledger.flush();
for (let index = written; index < written + Number(bufferedText); index++) ledger.record(record(index));
process.kill(process.pid, 'SIGKILL');
