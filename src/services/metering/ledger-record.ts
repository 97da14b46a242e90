/**
 * One metered request as the usage ledger stores it (`LedgerRecord`), and how it is built from the
 * request's normalised usage, priced once with the model's price card (`createLedgerRecord`).
 */
import type { Usage } from '../../core/usage.ts';
import { costMicroUsd, MICRO_USD_PER_USD, type PriceCard } from './price-card.ts';

/** One metered request. Field names map one to one onto the `usage_ledger` table's snake_case columns. */
export interface LedgerRecord {
  /** The request id sent in `x-request-id`. */
  requestId: string;
  organizationId: string;
  /** API key id (not the secret). */
  keyId: string;
  /** Public model id. */
  model: string;
  /** Request path, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** Prompt tokens, cached included. */
  inputTokens: number;
  /** Completion tokens, reasoning included. */
  outputTokens: number;
  /** Prompt tokens read from a prompt cache. */
  cachedTokens: number;
  /** Completion tokens spent reasoning. */
  reasoningTokens: number;
  /** Cost in integer micro-USD (services/metering/price-card.ts `costMicroUsd`; batch lines at the card's batch factor). */
  costMicroUsd: number;
  /** The same cost in USD (`costMicroUsd / 1,000,000`), for the readers of the `cost_usd` column. */
  costUsd: number;
  /** Run by the batch engine. */
  batch: boolean;
  /** HTTP status answered (for a stream: the status sent with its head, 200). */
  statusCode: number;
  /** Milliseconds from the request's arrival to the end of the answer. */
  latencyMs: number;
  /** When the request arrived, milliseconds since the epoch. */
  createdAtMs: number;
  /** The deployment that answered (provider id, `#n` for a provider's n-th key); null or absent when none did. */
  deployment?: string | null;
  /** Answered by the response cache (services/cache/). */
  cacheHit?: boolean;
  /** A cache hit: the tokens its answer's upstream call used (not spent again). */
  cacheSavedTokens?: number;
  /** A cache hit: that call's cost less the hit's, integer micro-USD. */
  cacheSavedMicroUsd?: number;
}

export interface LedgerRecordInit {
  requestId: string;
  organizationId: string;
  keyId: string;
  model: string;
  endpoint: string;
  usage: Usage;
  pricing: PriceCard;
  /** Run by the batch engine (priced at the card's batch factor). */
  batch: boolean;
  statusCode: number;
  /** Milliseconds from arrival to the end of the answer. */
  latencyMs: number;
  /** Arrival time, milliseconds since the epoch. */
  createdAtMs: number;
  /** The deployment that answered, when one did. */
  deployment?: string | null;
  /** Answered by the response cache: its cost replaces the one priced from `usage`. */
  cacheHit?: CacheHitCharge | undefined;
}

/** What a response-cache hit costs and saves (services/cache/cache-accounting.ts). */
export interface CacheHitCharge {
  /** Tokens of the cached answer's original upstream call. */
  savedTokens: number;
  /** What the hit is charged, integer micro-USD. */
  costMicroUsd: number;
  /** The original call's cost less `costMicroUsd`, integer micro-USD. */
  savedMicroUsd: number;
}

/** Builds a ledger record from a request's normalised usage, pricing it once with the model's price card. */
export function createLedgerRecord(init: LedgerRecordInit): LedgerRecord {
  const cost = init.cacheHit?.costMicroUsd ?? costMicroUsd(init.usage, init.pricing, { batch: init.batch });
  const record: LedgerRecord = {
    requestId: init.requestId,
    organizationId: init.organizationId,
    keyId: init.keyId,
    model: init.model,
    endpoint: init.endpoint,
    inputTokens: init.usage.inputTokens,
    outputTokens: init.usage.outputTokens,
    cachedTokens: init.usage.cachedInputTokens,
    reasoningTokens: init.usage.reasoningTokens,
    costMicroUsd: cost,
    costUsd: cost / MICRO_USD_PER_USD,
    batch: init.batch,
    statusCode: init.statusCode,
    latencyMs: init.latencyMs,
    createdAtMs: init.createdAtMs,
    deployment: init.deployment ?? null,
  };
  if (init.cacheHit !== undefined) {
    record.cacheHit = true;
    record.cacheSavedTokens = init.cacheHit.savedTokens;
    record.cacheSavedMicroUsd = init.cacheHit.savedMicroUsd;
  }
  return record;
}
