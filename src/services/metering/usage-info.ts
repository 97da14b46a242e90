/**
 * The SPEC `UsageInfo` object (SPEC "Resources": UsageInfo; used in `_metadata.user_total_usage` and in
 * the key-status endpoint's `usage_info.daily` / `usage_info.monthly`), built from limit figures.
 */
import type { LimitSnapshot, WindowFigures } from '../../limits/limit-store.ts';

/** SPEC UsageInfo, wire field names. */
export interface UsageInfo {
  /** Tokens counted in the window. */
  used: number;
  /** Token limit of the window; UNLIMITED_TOKENS when the tier sets no limit (config 0). */
  limit: number;
  /** Tokens left in the window; UNLIMITED_TOKENS when the tier sets no limit. */
  remaining: number;
  /** When the window resets, ISO 8601 date-time in UTC. */
  reset_at: string;
}

/**
 * `limit` and `remaining` of a window the tier does not limit (config 0): 2^31 - 1, the largest integer
 * every client's integer type holds. A client that compares `remaining` with what it needs, or checks
 * `remaining > 0`, keeps going, where a 0 (or -1) would read as exhausted; `used` stays the real count.
 */
export const UNLIMITED_TOKENS = 2_147_483_647;

/** Reset instants formatted recently: windows reset once a day or month, and every answer carries one. */
const formattedResets = new Map<number, string>();

function resetDate(resetAtMs: number): string {
  let formatted = formattedResets.get(resetAtMs);
  if (formatted === undefined) {
    if (formattedResets.size >= 16) formattedResets.clear();
    formatted = new Date(resetAtMs).toISOString();
    formattedResets.set(resetAtMs, formatted);
  }
  return formatted;
}

export function toUsageInfo(window: WindowFigures): UsageInfo {
  const resetAt = resetDate(window.resetAtMs);
  if (window.limit === 0) return { used: window.used, limit: UNLIMITED_TOKENS, remaining: UNLIMITED_TOKENS, reset_at: resetAt };
  return { used: window.used, limit: window.limit, remaining: window.remaining, reset_at: resetAt };
}

/** `usage_info` of the key-status endpoint. */
export function keyUsageInfo(snapshot: LimitSnapshot): { daily: UsageInfo; monthly: UsageInfo } {
  return { daily: toUsageInfo(snapshot.daily), monthly: toUsageInfo(snapshot.monthly) };
}

/**
 * `_metadata.user_total_usage`: the monthly total (the SPEC's plan quota is monthly), or the daily
 * one when the tier limits days but not months. Always the same window for a tier, so clients see one
 * steady figure rather than one that jumps between windows.
 */
export function userTotalUsage(snapshot: LimitSnapshot): UsageInfo {
  const window = snapshot.monthly.limit === 0 && snapshot.daily.limit > 0 ? snapshot.daily : snapshot.monthly;
  return toUsageInfo(window);
}
