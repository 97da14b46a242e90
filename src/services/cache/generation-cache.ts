/**
 * The response cache's use case for text generations (README "Response cache"): decides whether a
 * request may be answered from the cache, looks it up (in-process tier, then the shared store), joins
 * the single flight of identical misses, and hands back a recorder that stores the answer once it
 * completed. `MeteredGenerations` calls it after the model is resolved and the moderation pre-check,
 * before the prompt is counted and the request admitted.
 */
import type { ModelConfig, ResponseCacheConfig } from '../../config/index.ts';
import type { GenerationRequest } from '../../core/generation.ts';
import type { Caller } from '../caller.ts';
import type { CacheHitCharge } from '../metering/usage-ledger.ts';
import { cacheHitCharge } from './cache-accounting.ts';
import { CacheRecorder } from './cache-recorder.ts';
import { cacheKeyOf, modelVersionOf } from './cache-key.ts';
import { cacheSettingsFor, ttlSecondsOf, type CacheDirectives, type CacheSettings } from './cache-policy.ts';
import type { CachedAnswer } from './cached-answer.ts';
import type { Flights } from './flights.ts';
import type { ResponseTiers } from './response-tiers.ts';

/** What the endpoint hands the cache about a request. */
export interface CacheRequest {
  /** The request body as the client sent it. */
  body: Readonly<Record<string, unknown>>;
  directives: CacheDirectives;
}

/** `_metadata.cache`. */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** What the answer says about the cache: `_metadata.cache`, the `Cache-Status` header (RFC 9211) and the key. */
export interface CacheOutcome {
  status: CacheStatus;
  /** The `Cache-Status` header's value. */
  header: string;
  /** The entry's key (`x-switchyard-cache-key`), when one was computed. */
  key?: string;
}

/** A lookup's result: a cached answer, or a recorder for the generation about to run (absent: not stored). */
export interface CacheLookup {
  outcome: CacheOutcome;
  answer?: CachedAnswer;
  /** Records the generation about to run, for the cache (a stage of its stream). */
  recorder?: CacheRecorder;
}

/** Counts what the cache does (services/cache/cache-metrics.ts implements it on the Prometheus registry). */
export interface CacheObserver {
  lookedUp(endpoint: string, status: CacheStatus): void;
  stored(bytes: number): void;
}

/** The RFC 9211 cache name. */
const CACHE_NAME = 'switchyard';

/** Body fields that make a responses request depend on stored state (not cached: the docs' stateless rule). */
const STATEFUL_FIELDS = ['previous_response_id', 'conversation'];

function bypass(detail: string): CacheLookup {
  return { outcome: { status: 'bypass', header: `${CACHE_NAME}; fwd=bypass; detail=${detail}` } };
}

/** Whether any input item refers to a stored item (responses `item_reference`). */
function refersToStoredItems(body: Readonly<Record<string, unknown>>): boolean {
  const input = body['input'];
  return (
    Array.isArray(input) &&
    input.some((item) => typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'item_reference')
  );
}

export interface GenerationCacheDependencies {
  config: ResponseCacheConfig;
  tiers: ResponseTiers;
  flights: Flights;
  observer?: CacheObserver;
}

export class GenerationCache {
  constructor(private readonly dependencies: GenerationCacheDependencies) {}

  /**
   * Undefined when the cache is off for the caller (nothing is said about it in the answer); otherwise
   * a hit, or a miss or bypass with what to record.
   */
  async lookup(
    caller: Caller,
    model: ModelConfig,
    request: GenerationRequest,
    endpoint: string,
    cacheRequest: CacheRequest,
  ): Promise<CacheLookup | undefined> {
    const settings = cacheSettingsFor(this.dependencies.config, caller.auth);
    // Batch lines are priced and paced apart: they neither read nor fill the cache.
    if (settings === undefined || caller.batch) return undefined;
    const lookup = await this.find(settings, caller, model, request, endpoint, cacheRequest);
    this.dependencies.observer?.lookedUp(endpoint, lookup.outcome.status);
    return lookup;
  }

  /**
   * The same for a one-shot endpoint whose answer is deterministic (embeddings): no sampling or stored
   * state to consider; the answer is stored as its JSON body (`CacheRecorder.storeJson`).
   */
  async lookupJson(caller: Caller, model: ModelConfig, endpoint: string, cacheRequest: CacheRequest): Promise<CacheLookup | undefined> {
    const settings = cacheSettingsFor(this.dependencies.config, caller.auth);
    if (settings === undefined || caller.batch) return undefined;
    const lookup = await this.find(settings, caller, model, undefined, endpoint, cacheRequest);
    this.dependencies.observer?.lookedUp(endpoint, lookup.outcome.status);
    return lookup;
  }

  private async find(
    settings: CacheSettings,
    caller: Caller,
    model: ModelConfig,
    /** A generation's request (undefined: a deterministic one-shot endpoint). */
    request: GenerationRequest | undefined,
    endpoint: string,
    cacheRequest: CacheRequest,
  ): Promise<CacheLookup> {
    const { config, tiers, flights } = this.dependencies;
    const { body, directives } = cacheRequest;
    if (directives.noStore) return bypass('no-store');
    if (STATEFUL_FIELDS.some((field) => body[field] !== undefined && body[field] !== null) || refersToStoredItems(body))
      return bypass('stateful');
    if (request !== undefined && request.temperature !== 0 && !settings.cacheSampled) return bypass('sampled');
    const ttlSeconds = ttlSecondsOf(settings, directives);
    if (ttlSeconds === 0) return bypass('max-age-0');
    const organizationId = caller.auth.organizationId;
    const key = cacheKeyOf({
      organizationId,
      keyId: caller.auth.keyId,
      shareAcrossKeys: settings.shareAcrossKeys,
      endpoint,
      model: model.id,
      modelVersion: modelVersionOf(model),
      body,
    });
    const oldestMs = directives.ttlSeconds === undefined ? 0 : Date.now() - directives.ttlSeconds * 1000;
    if (!directives.noCache) {
      const answer = tiers.getLocal(organizationId, key) ?? (await tiers.getShared(organizationId, key));
      if (answer !== undefined && answer.storedAtMs >= oldestMs) return this.hit(key, answer);
    }
    // A fresh answer asked for (`no-cache`) is fetched alone; identical misses share one upstream call.
    const ticket = directives.noCache ? { role: 'alone' as const } : await flights.join(organizationId, key);
    if (ticket.role === 'hit') return this.hit(key, ticket.answer);
    const done = ticket.role === 'leader' ? ticket.done : () => Promise.resolve();
    const observer = this.dependencies.observer;
    const ttlMs = ttlSeconds * 1000;
    return {
      outcome: { status: 'miss', header: `${CACHE_NAME}; fwd=${directives.noCache ? 'request' : 'miss'}; key=${key}`, key },
      recorder: new CacheRecorder(
        {
          store: async (answer) => {
            const bytes = await tiers.set(organizationId, key, answer);
            if (bytes > 0) observer?.stored(bytes);
          },
          done,
        },
        ttlMs,
        config.maxEntryBytes,
      ),
    };
  }

  private hit(key: string, answer: CachedAnswer): CacheLookup {
    const ttl = Math.max(0, Math.round((answer.expiresAtMs - Date.now()) / 1000));
    return { outcome: { status: 'hit', header: `${CACHE_NAME}; hit; ttl=${ttl}; key=${key}`, key }, answer };
  }

  /** What a hit of `answer` costs and saves (the ledger's cache columns). */
  chargeFor(answer: CachedAnswer, model: ModelConfig): CacheHitCharge {
    return cacheHitCharge(answer, model, this.dependencies.config.hitCostFraction);
  }

  /** The organization's entries held in this instance's memory. */
  memoryEntries(organizationId: string): number {
    return this.dependencies.tiers.countOrganization(organizationId);
  }

  /** Deletes every entry of the organization (both tiers; the other instances drop theirs). */
  purge(organizationId: string): Promise<number> {
    return this.dependencies.tiers.purge(organizationId);
  }

  /** Shutdown: the shared store's own connections (the purge subscriber). */
  close(): Promise<void> {
    return this.dependencies.tiers.close();
  }
}
