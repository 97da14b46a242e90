/**
 * What the response cache saved an organization over a time range, from the ledger's cache columns
 * (migration 0210): requests answered from the cache, the tokens and the money (integer micro-USD)
 * their upstream calls would have cost. Read by the dashboard's usage page.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export interface CacheSavings {
  /** Requests answered from the cache. */
  hits: number;
  savedTokens: number;
  /** Integer micro-USD. */
  savedMicroUsd: number;
}

export class CacheSavingsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Between `fromMs` (inclusive) and `toMs` (exclusive), milliseconds since the epoch. */
  async savings(organizationId: string, fromMs: number, toMs: number): Promise<CacheSavings> {
    const row = await this.db
      .selectFrom('usage_ledger')
      .where('organization_id', '=', organizationId)
      .where('created_at', '>=', fromMs)
      .where('created_at', '<', toMs)
      .where('cache_hit', '=', 1)
      .select((expression) => [
        expression.fn.countAll<number | string>().as('hits'),
        expression.fn.sum<number | string | null>('cache_saved_tokens').as('saved_tokens'),
        expression.fn.sum<number | string | null>('cache_saved_micro_usd').as('saved_micro_usd'),
      ])
      .executeTakeFirst();
    return {
      hits: Number(row?.hits ?? 0),
      savedTokens: Number(row?.saved_tokens ?? 0),
      savedMicroUsd: Number(row?.saved_micro_usd ?? 0),
    };
  }
}
