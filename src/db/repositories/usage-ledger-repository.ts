/**
 * The usage ledger: one row per metered request, written in batches by the metering service, and
 * summed for the operator's `switchyard usage` report. Each write also adds to the daily rollups
 * (`usage_daily`) in the same transaction; the dashboard reads those (usage-rollups-repository.ts).
 */
import { CompiledQuery, sql, type Insertable, type Kysely } from 'kysely';
import type { LedgerRecord } from '../../services/metering/usage-ledger.ts';
import type { DatabaseSchema, UsageDailyTable, UsageLedgerTable } from '../schema.ts';

export type LedgerRow = Insertable<UsageLedgerTable>;

/** Column order of the compiled insert (the order `writeRow` writes, and the placeholder row's keys). */
const LEDGER_COLUMNS = [
  'request_id',
  'organization_id',
  'key_id',
  'model',
  'endpoint',
  'input_tokens',
  'output_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cost_usd',
  'cost_micro_usd',
  'batch',
  'status_code',
  'latency_ms',
  'created_at',
  'deployment',
  'cache_hit',
  'cache_saved_tokens',
  'cache_saved_micro_usd',
] as const satisfies ReadonlyArray<keyof LedgerRow>;

const PLACEHOLDER_ROW: LedgerRow = Object.fromEntries(LEDGER_COLUMNS.map((column) => [column, 0])) as unknown as LedgerRow;

/**
 * Writes `entry` as the insert's parameters `[at, at + LEDGER_COLUMNS.length)`, in column order: no row
 * object per record and no lookup per column name (a flush of 500 rows filled 9,500 slots that way).
 */
function writeRow(entry: LedgerRecord, parameters: unknown[], at: number): void {
  parameters[at] = entry.requestId;
  parameters[at + 1] = entry.organizationId;
  parameters[at + 2] = entry.keyId;
  parameters[at + 3] = entry.model;
  parameters[at + 4] = entry.endpoint;
  parameters[at + 5] = entry.inputTokens;
  parameters[at + 6] = entry.outputTokens;
  parameters[at + 7] = entry.cachedTokens;
  parameters[at + 8] = entry.reasoningTokens;
  parameters[at + 9] = entry.costUsd;
  parameters[at + 10] = entry.costMicroUsd;
  parameters[at + 11] = entry.batch ? 1 : 0;
  parameters[at + 12] = entry.statusCode;
  parameters[at + 13] = entry.latencyMs;
  parameters[at + 14] = entry.createdAtMs;
  parameters[at + 15] = entry.deployment ?? null;
  parameters[at + 16] = entry.cacheHit === true ? 1 : 0;
  parameters[at + 17] = entry.cacheSavedTokens ?? 0;
  parameters[at + 18] = entry.cacheSavedMicroUsd ?? 0;
}

export interface UsageSummaryRow {
  model: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** US dollars. */
  costUsd: number;
}

const MILLISECONDS_PER_DAY = 86_400_000;

/** Most ledger rows in one insert statement (18 parameters a row; Postgres takes at most 65,535). */
const MAX_LEDGER_ROWS = 500;
/** Most rollup rows in one upsert statement. */
const MAX_ROLLUP_ROWS = 200;

/**
 * Rows for the next multi-row statement when `remaining` are left: `most`, or else the largest power of
 * two that fits (437 ledger rows go in as 256 + 128 + 32 + 16 + 4 + 1). SQLite keeps each distinct
 * statement prepared, and a prepared 500-row ledger insert holds ~680 KB: with one statement per batch
 * size, every size the ledger's timed flushes produce would keep one. This way there are at most ten.
 */
export function chunkRows(remaining: number, most: number): number {
  if (remaining >= most) return most;
  return 2 ** Math.floor(Math.log2(remaining));
}

function compareRollupRows(a: Insertable<UsageDailyTable>, b: Insertable<UsageDailyTable>): number {
  if (a.organization_id !== b.organization_id) return a.organization_id < b.organization_id ? -1 : 1;
  if (a.day_start !== b.day_start) return Number(a.day_start) - Number(b.day_start);
  if (a.model !== b.model) return a.model < b.model ? -1 : 1;
  if (a.key_id !== b.key_id) return a.key_id < b.key_id ? -1 : 1;
  return 0;
}

/**
 * Adds the records to the `usage_daily` rollups (organization, UTC day, model, key), inside the
 * ledger insert's transaction, so rollups and ledger never disagree. One upsert per distinct group.
 */
async function upsertDailyRollups(transaction: Kysely<DatabaseSchema>, entries: readonly LedgerRecord[]): Promise<void> {
  const groups = new Map<string, Insertable<UsageDailyTable>>();
  for (const entry of entries) {
    const dayStart = Math.floor(entry.createdAtMs / MILLISECONDS_PER_DAY) * MILLISECONDS_PER_DAY;
    const groupKey = JSON.stringify([entry.organizationId, dayStart, entry.model, entry.keyId]);
    let group = groups.get(groupKey);
    if (group === undefined) {
      group = {
        organization_id: entry.organizationId,
        day_start: dayStart,
        model: entry.model,
        key_id: entry.keyId,
        requests: 0,
        input_tokens: 0,
        output_tokens: 0,
        cached_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: 0,
      };
      groups.set(groupKey, group);
    }
    group.requests += 1;
    group.input_tokens += entry.inputTokens;
    group.output_tokens += entry.outputTokens;
    group.cached_tokens += entry.cachedTokens;
    group.reasoning_tokens += entry.reasoningTokens;
    group.cost_usd += entry.costUsd;
  }
  // Rows are upserted in one fixed order (organization, day, model, key): two instances writing
  // overlapping groups lock them in the same order, so their transactions never deadlock.
  const rows = [...groups.values()].sort(compareRollupRows);
  for (let start = 0; start < rows.length;) {
    const end = start + chunkRows(rows.length - start, MAX_ROLLUP_ROWS);
    await transaction
      .insertInto('usage_daily')
      .values(rows.slice(start, end))
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'day_start', 'model', 'key_id']).doUpdateSet((eb) => ({
          requests: eb('usage_daily.requests', '+', eb.ref('excluded.requests')),
          input_tokens: eb('usage_daily.input_tokens', '+', eb.ref('excluded.input_tokens')),
          output_tokens: eb('usage_daily.output_tokens', '+', eb.ref('excluded.output_tokens')),
          cached_tokens: eb('usage_daily.cached_tokens', '+', eb.ref('excluded.cached_tokens')),
          reasoning_tokens: eb('usage_daily.reasoning_tokens', '+', eb.ref('excluded.reasoning_tokens')),
          cost_usd: eb('usage_daily.cost_usd', '+', eb.ref('excluded.cost_usd')),
        })),
      )
      .execute();
    start = end;
  }
}

export class UsageLedgerRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** SQL of a multi-row insert, per row count: built by Kysely once, then reused with new parameters. */
  private readonly insertStatements = new Map<number, string>();

  private insertStatement(rowCount: number): string {
    let statement = this.insertStatements.get(rowCount);
    if (statement === undefined) {
      // A request id already stored is skipped (unique index, migration 0070): a retried write whose
      // first attempt committed, or a replayed journal, adds nothing. The ids inserted come back.
      statement = this.db
        .insertInto('usage_ledger')
        .values(Array.from({ length: rowCount }, () => PLACEHOLDER_ROW))
        .onConflict((conflict) => conflict.column('request_id').doNothing())
        .returning('request_id')
        .compile().sql;
      this.insertStatements.set(rowCount, statement);
    }
    return statement;
  }

  /**
   * Inserts entries in multi-row statements, all in one transaction (all or nothing; the caller's when
   * this repository was made over a transaction). The SQL is compiled once per row count: building a
   * 500-row query tree at every flush was 3% of the gateway's CPU. Row counts come from a fixed set
   * (`chunkRows`), so there are at most ten statements to compile and keep prepared.
   */
  async insertMany(entries: readonly LedgerRecord[]): Promise<void> {
    if (entries.length === 0) return;
    const insert = async (executor: Kysely<DatabaseSchema>): Promise<void> => {
      const inserted = new Set<string>();
      for (let start = 0; start < entries.length;) {
        const end = start + chunkRows(entries.length - start, MAX_LEDGER_ROWS);
        // One flat list in column order, made at its size and filled in place (a flatMap of per-row arrays cost ~1 µs a record).
        const parameters: unknown[] = new Array((end - start) * LEDGER_COLUMNS.length);
        for (let index = start; index < end; index++) writeRow(entries[index]!, parameters, (index - start) * LEDGER_COLUMNS.length);
        const result = await executor.executeQuery<{ request_id: string }>(
          CompiledQuery.raw(this.insertStatement(end - start), parameters),
        );
        for (const row of result.rows) inserted.add(row.request_id);
        start = end;
      }
      // Only rows this write added count toward the rollups.
      await upsertDailyRollups(
        executor,
        inserted.size === entries.length ? entries : entries.filter((entry) => inserted.delete(entry.requestId)),
      );
    };
    // Inside a caller's transaction (a batch line's outcome and its rows commit together) it joins it.
    if (this.db.isTransaction) await insert(this.db);
    else await this.db.transaction().execute(insert);
  }

  /**
   * Tokens (input + output) per organization since `monthStartMs`, and of those since `dayStartMs`
   * (milliseconds since epoch): what the in-process limit store restores at start-up.
   */
  async organizationTotals(
    monthStartMs: number,
    dayStartMs: number,
  ): Promise<Array<{ organizationId: string; dayTokens: number; monthTokens: number }>> {
    const rows = await this.db
      .selectFrom('usage_ledger')
      .where('created_at', '>=', monthStartMs)
      .groupBy('organization_id')
      .select((eb) => [
        'organization_id',
        eb.fn.sum<number>(sql<number>`input_tokens + output_tokens`).as('month_tokens'),
        eb.fn.sum<number>(sql<number>`case when created_at >= ${dayStartMs} then input_tokens + output_tokens else 0 end`).as('day_tokens'),
      ])
      .execute();
    return rows.map((row) => ({
      organizationId: row.organization_id,
      dayTokens: Number(row.day_tokens),
      monthTokens: Number(row.month_tokens),
    }));
  }

  /** Per-organization and per-model totals across every organization since `sinceMs` (`usage --all`). */
  summarizeAll(sinceMs: number): Promise<Array<UsageSummaryRow & { organizationId: string }>> {
    return this.totals(sinceMs, undefined);
  }

  /** Per-model totals for one organization since `sinceMs` (milliseconds since epoch). */
  async summarize(organizationId: string, sinceMs: number): Promise<UsageSummaryRow[]> {
    return (await this.totals(sinceMs, organizationId)).map(({ organizationId: _organization, ...row }) => row);
  }

  /** Totals per organization and model since `sinceMs`, of one organization or of all. */
  private async totals(sinceMs: number, organizationId: string | undefined): Promise<Array<UsageSummaryRow & { organizationId: string }>> {
    let query = this.db.selectFrom('usage_ledger').where('created_at', '>=', sinceMs);
    if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
    const rows = await query
      .groupBy(['organization_id', 'model'])
      .orderBy('organization_id')
      .orderBy('model')
      .select((eb) => [
        'organization_id',
        'model',
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>('input_tokens').as('input_tokens'),
        eb.fn.sum<number>('output_tokens').as('output_tokens'),
        eb.fn.sum<number>('cached_tokens').as('cached_tokens'),
        eb.fn.sum<number>('reasoning_tokens').as('reasoning_tokens'),
        eb.fn.sum<number>('cost_usd').as('cost_usd'),
      ])
      .execute();
    return rows.map((row) => ({
      organizationId: row.organization_id,
      model: row.model,
      requests: Number(row.requests),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      cachedTokens: Number(row.cached_tokens),
      reasoningTokens: Number(row.reasoning_tokens),
      costUsd: Number(row.cost_usd),
    }));
  }
}
