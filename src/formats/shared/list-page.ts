/**
 * The cursor pages of the list endpoints (files, batches): the `limit` query parameter and the `list`
 * object they answer with (`first_id`, `last_id`, `has_more`, as the OpenAI SDKs page through them).
 */
import { invalidParameter } from '../../core/service-error.ts';

/** `limit` as an integer from 1 to `max`, `fallback` when absent or empty. */
export function decodeListLimit(value: unknown, max: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const text = String(value);
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > max) throw invalidParameter('limit', `limit must be an integer from 1 to ${max}.`);
  return limit;
}

/** A query string value, undefined when absent or empty (passed on as the query parser gave it). */
export function optionalQueryText(value: unknown): string | undefined {
  return value === undefined || value === '' ? undefined : (value as string);
}

/** One page of a list endpoint. */
export function listPage<T extends { id: string }>(data: T[], hasMore: boolean): Record<string, unknown> {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: hasMore };
}
