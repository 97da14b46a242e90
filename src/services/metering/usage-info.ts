/**
 * The SPEC `UsageInfo` object (SPEC "Resources": UsageInfo; used in `_metadata.user_total_usage` and in
 * the key-status endpoint's `usage_info.daily` / `usage_info.monthly`), built from limit figures.
 */
import type { LimitSnapshot, WindowFigures } from '../../limits/limit-store.ts';

/** SPEC UsageInfo, wire field names. */
export interface UsageInfo {
  /** Tokens counted in the window. */
  used: number;
  /** Token limit of the window; 0 means unlimited (the tier sets no limit). */
  limit: number;
  /** Tokens left in the window; 0 when unlimited (look at `limit`). */
  remaining: number;
  /** When the window resets, ISO 8601 date-time in UTC. */
  reset_at: string;
}

export function toUsageInfo(window: WindowFigures): UsageInfo {
  return { used: window.used, limit: window.limit, remaining: window.remaining, reset_at: new Date(window.resetAtMs).toISOString() };
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
