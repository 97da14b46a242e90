/**
 * The usage ledger: one row per metered request, written in batches by the metering service, and
 * summed for the operator's `switchyard usage` report.
 */
import type { Insertable, Kysely } from 'kysely';
import type { DatabaseSchema, UsageLedgerTable } from '../schema.ts';

export type LedgerRow = Insertable<UsageLedgerTable>;

/** One metered request as the metering service records it (the LedgerSink port's record, camelCase). */
export interface LedgerEntry {
  requestId: string;
  organizationId: string;
  keyId: string;
  model: string;
  endpoint: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** US dollars. */
  costUsd: number;
  batch: boolean;
  statusCode: number;
  /** Milliseconds. */
  latencyMs: number;
  /** Milliseconds since epoch. */
  createdAtMs: number;
}

function toRow(entry: LedgerEntry): LedgerRow {
  return {
    request_id: entry.requestId,
    organization_id: entry.organizationId,
    key_id: entry.keyId,
    model: entry.model,
    endpoint: entry.endpoint,
    input_tokens: entry.inputTokens,
    output_tokens: entry.outputTokens,
    cached_tokens: entry.cachedTokens,
    reasoning_tokens: entry.reasoningTokens,
    cost_usd: entry.costUsd,
    batch: entry.batch ? 1 : 0,
    status_code: entry.statusCode,
    latency_ms: entry.latencyMs,
    created_at: entry.createdAtMs,
  };
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

export class UsageLedgerRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Inserts entries in one statement per 500 rows, all in one transaction (all or nothing). */
  async insertMany(entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map(toRow);
    await this.db.transaction().execute(async (transaction) => {
      for (let start = 0; start < rows.length; start += 500) {
        await transaction.insertInto('usage_ledger').values(rows.slice(start, start + 500)).execute();
      }
    });
  }

  /** Per-model totals for one organization since `sinceMs` (milliseconds since epoch). */
  async summarize(organizationId: string, sinceMs: number): Promise<UsageSummaryRow[]> {
    const rows = await this.db
      .selectFrom('usage_ledger')
      .where('organization_id', '=', organizationId)
      .where('created_at', '>=', sinceMs)
      .groupBy('model')
      .orderBy('model')
      .select((eb) => [
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
