/**
 * The calendar of the limits: fixed windows, all in UTC. A window is [startMs, endMs).
 * - minute: aligned to whole minutes of the epoch (so every instance agrees on the bucket);
 * - day: 00:00 UTC to the next 00:00 UTC (daily totals reset at 00:00 UTC);
 * - month: the 1st 00:00 UTC to the next 1st 00:00 UTC (SPEC "Limits": the free plan resets on the 1st).
 */

const MILLISECONDS_PER_MINUTE = 60_000;
const MILLISECONDS_PER_DAY = 86_400_000;

export interface LimitWindow {
  /** Inclusive start, milliseconds since the epoch. */
  startMs: number;
  /** Exclusive end (the reset time), milliseconds since the epoch. */
  endMs: number;
  /** Stable name of the window used in storage keys, e.g. `29120400`, `2025-01-31`, `2025-01`. */
  label: string;
}

export function minuteWindow(nowMs: number): LimitWindow {
  const minuteIndex = Math.floor(nowMs / MILLISECONDS_PER_MINUTE);
  return { startMs: minuteIndex * MILLISECONDS_PER_MINUTE, endMs: (minuteIndex + 1) * MILLISECONDS_PER_MINUTE, label: String(minuteIndex) };
}

export function dayWindow(nowMs: number): LimitWindow {
  const dayIndex = Math.floor(nowMs / MILLISECONDS_PER_DAY);
  const startMs = dayIndex * MILLISECONDS_PER_DAY;
  return { startMs, endMs: startMs + MILLISECONDS_PER_DAY, label: new Date(startMs).toISOString().slice(0, 10) };
}

export function monthWindow(nowMs: number): LimitWindow {
  const date = new Date(nowMs);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const startMs = Date.UTC(year, month, 1);
  // Date.UTC rolls month 12 over into January of the next year.
  return { startMs, endMs: Date.UTC(year, month + 1, 1), label: new Date(startMs).toISOString().slice(0, 7) };
}

/** The three windows a request is charged to, all taken at the same instant. */
export interface ChargedWindows {
  readonly minute: Readonly<LimitWindow>;
  readonly day: Readonly<LimitWindow>;
  readonly month: Readonly<LimitWindow>;
}

/** The last minute's windows: every request of one minute shares them, and building dates is the costly part. */
let cachedWindows: ChargedWindows | undefined;

/** The minute, day and month windows containing `nowMs`. The result is shared: do not mutate it. */
export function windowsAt(nowMs: number): ChargedWindows {
  if (cachedWindows !== undefined && nowMs >= cachedWindows.minute.startMs && nowMs < cachedWindows.minute.endMs) return cachedWindows;
  const windows: ChargedWindows = Object.freeze({
    minute: Object.freeze(minuteWindow(nowMs)),
    day: Object.freeze(dayWindow(nowMs)),
    month: Object.freeze(monthWindow(nowMs)),
  });
  cachedWindows = windows;
  return windows;
}

/** Whole seconds until `resetAtMs`, rounded up and at least 1, as `retry-after` wants them. */
export function secondsUntil(resetAtMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000));
}
