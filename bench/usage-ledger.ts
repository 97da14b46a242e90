/**
 * The usage ledger's write, which every metered request pays for: CPU per record of
 * `UsageLedgerRepository.insertMany` with the ledger's batch size (500 records, one transaction: the
 * multi-row insert and the daily rollups), on a SQLite file opened as `npm start` opens it
 * (`openDatabase`: WAL, 2 MB page cache, prepared statements kept by db/sqlite-statement-cache.ts).
 * Baseline, in the same run: the same writes through Kysely's SQLite driver straight over
 * better-sqlite3 with the same file settings, which prepares every statement it runs. Rounds alternate between the two; the median round is printed.
 *
 *   node --import tsx bench/usage-ledger.ts [rounds]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { createMigrations } from '../src/db/migrations/index.ts';
import { UsageLedgerRepository } from '../src/db/repositories/usage-ledger-repository.ts';
import type { DatabaseSchema } from '../src/db/schema.ts';
import type { LedgerRecord } from '../src/services/metering/usage-ledger.ts';

const rounds = Number(process.argv[2] ?? 7);
const BATCH_RECORDS = 500;
const BATCHES_PER_ROUND = 40;
const directory = mkdtempSync(join(tmpdir(), 'switchyard-bench-ledger-'));

/** The ledger as served: the project's own `openDatabase` (pragmas, statement cache) and migrations. */
async function servedLedger(): Promise<{ repository: UsageLedgerRepository; db: Kysely<DatabaseSchema> }> {
  const database = openDatabase(`sqlite:${join(directory, 'served.db')}`);
  await database.migrate();
  return { repository: new UsageLedgerRepository(database.db), db: database.db };
}

/** The baseline: the same file settings, with Kysely's SQLite driver straight over better-sqlite3. */
async function uncachedLedger(): Promise<{ repository: UsageLedgerRepository; db: Kysely<DatabaseSchema> }> {
  const sqlite = new SqliteDatabase(join(directory, 'uncached.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('cache_size = -2000');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  const migrated = await new Migrator({ db, provider: { getMigrations: async () => createMigrations('sqlite') } }).migrateToLatest();
  if (migrated.error !== undefined) throw migrated.error;
  return { repository: new UsageLedgerRepository(db), db };
}

/** A batch as the gateway writes it: a few keys and models, one day. */
const batch: LedgerRecord[] = Array.from({ length: BATCH_RECORDS }, (_, index) => ({
  requestId: `req_${index}`,
  organizationId: 'org-bench',
  keyId: `key_${index % 4}`,
  model: index % 3 === 0 ? 'bench-model' : 'bench-model-large',
  endpoint: '/v1/chat/completions',
  inputTokens: 12,
  outputTokens: 20,
  cachedTokens: 0,
  reasoningTokens: 0,
  costMicroUsd: 400,
  costUsd: 0.0004,
  batch: false,
  statusCode: 200,
  latencyMs: 1.5,
  createdAtMs: Date.now(),
  deployment: 'mock',
}));

/** CPU µs per record over one round of `BATCHES_PER_ROUND` batches. */
async function round(repository: UsageLedgerRepository): Promise<number> {
  const start = process.cpuUsage();
  for (let index = 0; index < BATCHES_PER_ROUND; index++) await repository.insertMany(batch);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (BATCHES_PER_ROUND * BATCH_RECORDS);
}

const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;

const ledgers = [
  {
    label: 'Kysely over better-sqlite3, a prepare per query (baseline)',
    ...(await uncachedLedger()),
    figures: [] as number[],
  },
  {
    label: 'prepared statements kept (db/sqlite-statement-cache.ts, as served)',
    ...(await servedLedger()),
    figures: [] as number[],
  },
];
try {
  // One round each first, not counted: the first compiles the insert and warms the JIT.
  for (const ledger of ledgers) await round(ledger.repository);
  for (let index = 0; index < rounds; index++) {
    const order = index % 2 === 0 ? ledgers : [...ledgers].reverse();
    for (const ledger of order) ledger.figures.push(await round(ledger.repository));
  }
  console.log(`\nUsage ledger writes, ${BATCH_RECORDS}-record batches, ${BATCHES_PER_ROUND} per round, median of ${rounds} rounds`);
  console.log('| write path | CPU µs per record | vs baseline |');
  console.log('|---|---:|---:|');
  const baseline = median(ledgers[0]!.figures);
  for (const ledger of ledgers) {
    const figure = median(ledger.figures);
    console.log(`| ${ledger.label} | ${figure.toFixed(2)} | ${(figure / baseline).toFixed(2)} |`);
  }
} finally {
  for (const ledger of ledgers) await ledger.db.destroy();
  rmSync(directory, { recursive: true, force: true });
}
