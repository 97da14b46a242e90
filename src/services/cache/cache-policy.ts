/**
 * Who has the response cache and what a request asks of it: the organization's and key's settings
 * (config `responseCache`), and the request's directives, from `Cache-Control` (RFC 9111 request
 * directives `no-cache`, `no-store`, `max-age`) or, for SDKs that cannot set headers, the body field
 * `switchyard_cache: { no_cache?, no_store?, ttl_seconds? }`.
 */
import type { AuthContext } from '../caller-identity.ts';
import type { ResponseCacheConfig } from '../../config/index.ts';
import { invalidFormat, invalidParameter } from '../../core/service-error.ts';

/** The cache settings one caller works under. */
export interface CacheSettings {
  shareAcrossKeys: boolean;
  /** Cache answers sampled above temperature 0. */
  cacheSampled: boolean;
  /** Seconds. */
  defaultTtlSeconds: number;
  /** Seconds. */
  maxTtlSeconds: number;
}

/** The caller's cache settings, or undefined when the cache is off for it (organization, plan, key). */
export function cacheSettingsFor(config: ResponseCacheConfig, auth: AuthContext): CacheSettings | undefined {
  const organization = config.organizations[auth.organizationId];
  const plan = auth.limits?.plan ?? auth.tier;
  const organizationOn = organization?.enabled ?? config.plans.includes(plan);
  const keyOn = config.keys[auth.keyId];
  if (!(keyOn ?? organizationOn)) return undefined;
  const maxTtlSeconds = organization?.maxTtlSeconds ?? config.maxTtlSeconds;
  return {
    // A key that has the cache while its organization does not keeps it to itself.
    shareAcrossKeys: organizationOn && organization?.shareAcrossKeys === true,
    cacheSampled: organization?.cacheSampled === true,
    defaultTtlSeconds: Math.min(organization?.defaultTtlSeconds ?? config.defaultTtlSeconds, maxTtlSeconds),
    maxTtlSeconds,
  };
}

/** What the request asks of the cache. */
export interface CacheDirectives {
  /** Do not answer from the cache (a fresh answer), but store it. */
  noCache: boolean;
  /** Neither answer from the cache nor store. */
  noStore: boolean;
  /** A shorter TTL for the answer stored, and the oldest entry accepted, seconds. */
  ttlSeconds?: number;
}

/** The body field's name. */
export const CACHE_BODY_FIELD = 'switchyard_cache';

/** Directives from the `Cache-Control` request header (unknown directives are ignored, as RFC 9111 says). */
export function directivesOfHeader(cacheControl: string | undefined): CacheDirectives {
  const directives: CacheDirectives = { noCache: false, noStore: false };
  if (cacheControl === undefined) return directives;
  for (const item of cacheControl.split(',')) {
    const [name = '', value] = item.trim().toLowerCase().split('=', 2);
    if (name === 'no-cache') directives.noCache = true;
    else if (name === 'no-store') directives.noStore = true;
    else if (name === 'max-age' && value !== undefined) {
      const seconds = Number(value.replace(/^"|"$/g, ''));
      if (Number.isInteger(seconds) && seconds >= 0) directives.ttlSeconds = seconds;
    }
  }
  return directives;
}

/**
 * The body field's directives over the header's. A malformed field is the client's mistake: a 400
 * naming it, whether or not the cache is on for the caller.
 */
export function directivesOf(cacheControl: string | undefined, body: unknown): CacheDirectives {
  const directives = directivesOfHeader(cacheControl);
  if (typeof body !== 'object' || body === null || !(CACHE_BODY_FIELD in body)) return directives;
  const field = (body as Record<string, unknown>)[CACHE_BODY_FIELD];
  if (field === undefined || field === null) return directives;
  if (typeof field !== 'object' || Array.isArray(field))
    throw invalidFormat(CACHE_BODY_FIELD, `Invalid '${CACHE_BODY_FIELD}': expected an object such as {"no_cache": true}.`);
  for (const [name, value] of Object.entries(field as Record<string, unknown>)) {
    const param = `${CACHE_BODY_FIELD}.${name}`;
    if (name === 'no_cache' || name === 'no_store') {
      if (typeof value !== 'boolean') throw invalidFormat(param, `Invalid '${param}': expected a boolean.`);
      if (name === 'no_cache') directives.noCache ||= value;
      else directives.noStore ||= value;
    } else if (name === 'ttl_seconds') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        throw invalidParameter(param, `Invalid '${param}': expected a whole number of seconds, 0 or more.`);
      directives.ttlSeconds = Math.min(value, directives.ttlSeconds ?? value);
    } else {
      throw invalidParameter(param, `Unknown parameter '${param}': '${CACHE_BODY_FIELD}' takes no_cache, no_store and ttl_seconds.`);
    }
  }
  return directives;
}

/** The TTL of an entry stored for this request, seconds: the request's, never above the maximum. */
export function ttlSecondsOf(settings: CacheSettings, directives: CacheDirectives): number {
  return Math.min(directives.ttlSeconds ?? settings.defaultTtlSeconds, settings.maxTtlSeconds);
}
