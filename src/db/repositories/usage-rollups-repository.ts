/**
 * Reads the daily usage rollups (`usage_daily`, written with the ledger in usage-ledger-repository.ts):
 * what the dashboard's usage page shows. A 90-day range of one organization is at most
 * days x models x keys rows, however many requests the ledger holds.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export interface DailyUsageRow {
  /** 00:00 UTC of the day, milliseconds since epoch. */
  dayStart: number;
  model: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  costUsd: number;
}

export interface KeyUsageRow {
  keyId: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export class UsageRollupsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Per day and model (keys summed) for days in [fromDayStart, toDayStart], oldest first. */
  async daily(organizationId: string, fromDayStart: number, toDayStart: number): Promise<DailyUsageRow[]> {
    const rows = await this.db
      .selectFrom('usage_daily')
      .where('organization_id', '=', organizationId)
      .where('day_start', '>=', fromDayStart)
      .where('day_start', '<=', toDayStart)
      .groupBy(['day_start', 'model'])
      .orderBy('day_start')
      .orderBy('model')
      .select((eb) => [
        'day_start',
        'model',
        eb.fn.sum<number>('requests').as('requests'),
        eb.fn.sum<number>('input_tokens').as('input_tokens'),
        eb.fn.sum<number>('output_tokens').as('output_tokens'),
        eb.fn.sum<number>('cached_tokens').as('cached_tokens'),
        eb.fn.sum<number>('reasoning_tokens').as('reasoning_tokens'),
        eb.fn.sum<number>('cost_usd').as('cost_usd'),
      ])
      .execute();
    return rows.map((row) => ({
      dayStart: Number(row.day_start),
      model: row.model,
      requests: Number(row.requests),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      cachedTokens: Number(row.cached_tokens),
      reasoningTokens: Number(row.reasoning_tokens),
      costUsd: Number(row.cost_usd),
    }));
  }

  /** Per key (days and models summed) for days in [fromDayStart, toDayStart], most tokens first. */
  async byKey(organizationId: string, fromDayStart: number, toDayStart: number): Promise<KeyUsageRow[]> {
    const rows = await this.db
      .selectFrom('usage_daily')
      .where('organization_id', '=', organizationId)
      .where('day_start', '>=', fromDayStart)
      .where('day_start', '<=', toDayStart)
      .groupBy('key_id')
      .select((eb) => [
        'key_id',
        eb.fn.sum<number>('requests').as('requests'),
        eb.fn.sum<number>('input_tokens').as('input_tokens'),
        eb.fn.sum<number>('output_tokens').as('output_tokens'),
        eb.fn.sum<number>('cost_usd').as('cost_usd'),
      ])
      .execute();
    return rows
      .map((row) => ({
        keyId: row.key_id,
        requests: Number(row.requests),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
        costUsd: Number(row.cost_usd),
      }))
      .sort((first, second) => second.inputTokens + second.outputTokens - (first.inputTokens + first.outputTokens));
  }

  /** The last day each of the organization's keys was used (00:00 UTC, milliseconds), by key id. */
  async lastUsedDays(organizationId: string): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('usage_daily')
      .where('organization_id', '=', organizationId)
      .groupBy('key_id')
      .select((eb) => ['key_id', eb.fn.max<number>('day_start').as('last_day')])
      .execute();
    return new Map(rows.map((row) => [row.key_id, Number(row.last_day)]));
  }
}
