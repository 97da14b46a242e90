/**
 * What a response-cache hit costs: the operator's share (`responseCache.hitCostFraction`, default 0)
 * of what its answer's upstream call cost, priced now with the model's card; the rest is recorded as
 * saved, with the tokens (the ledger's `cache_saved_*` columns). The hit's own usage is empty: it spent
 * no tokens, so it takes nothing from the token limits, while it still counts as a request.
 */
import type { ModelConfig } from '../../config/index.ts';
import { totalTokens } from '../../core/usage.ts';
import { costMicroUsd } from '../metering/price-card.ts';
import type { CacheHitCharge } from '../metering/usage-ledger.ts';
import { finishOf, type CachedAnswer } from './cached-answer.ts';

export function cacheHitCharge(answer: CachedAnswer, model: ModelConfig, hitCostFraction: number): CacheHitCharge {
  const usage = finishOf(answer).usage;
  const original = costMicroUsd(usage, model.pricing, { batch: false });
  const charged = Math.round(original * hitCostFraction);
  return { savedTokens: totalTokens(usage), costMicroUsd: charged, savedMicroUsd: original - charged };
}
