/**
 * Reads how long an upstream asks us to wait before retrying, from the headers the OpenAI and
 * Anthropic APIs send (docs/wire-contracts.md "Both SDKs": `retry-after-ms` first, then `retry-after` in
 * seconds or as an HTTP date, RFC 9110 section 10.2.3).
 */
import type { IncomingHttpHeaders } from 'node:http';

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The delay asked for, milliseconds (never negative), or null when the headers name none. */
export function parseRetryAfter(headers: IncomingHttpHeaders, now: number = Date.now()): number | null {
  const milliseconds = firstValue(headers['retry-after-ms']);
  if (milliseconds !== undefined) {
    const parsed = Number(milliseconds);
    if (Number.isFinite(parsed)) return Math.max(0, parsed);
  }
  const retryAfter = firstValue(headers['retry-after'])?.trim();
  if (retryAfter === undefined || retryAfter === '') return null;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
