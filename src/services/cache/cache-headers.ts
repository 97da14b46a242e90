/**
 * The response headers of a cached or cacheable answer: `Cache-Status` (RFC 9211,
 * https://www.rfc-editor.org/rfc/rfc9211) and `x-switchyard-cache-key`, the entry's id (for support and purging).
 */
import type { CacheOutcome } from './generation-cache.ts';

export const CACHE_STATUS_HEADER = 'cache-status';
export const CACHE_KEY_HEADER = 'x-switchyard-cache-key';

export function addCacheHeaders(headers: Record<string, string>, outcome: CacheOutcome): void {
  headers[CACHE_STATUS_HEADER] = outcome.header;
  if (outcome.key !== undefined) headers[CACHE_KEY_HEADER] = outcome.key;
}
