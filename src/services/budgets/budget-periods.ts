/**
 * The calendar of budgets, all in UTC: a period is [startMs, endMs). `day` starts at 00:00 UTC,
 * `week` on Monday 00:00 UTC (ISO weeks), `month` on the 1st 00:00 UTC; `total` never ends. The label
 * names the period in counter names, so a request at 00:00:00.5 of a new period counts in a new,
 * empty counter: the reset is exact without any job running at the boundary.
 */
import type { BudgetPeriod } from '../../config/index.ts';

export interface BudgetWindow {
  startMs: number;
  /** The reset; null for `total`. */
  endMs: number | null;
  /** e.g. `2026-11-29`, `w2026-11-23`, `2026-11`, `total`. */
  label: string;
}

const DAY_MS = 86_400_000;

export function budgetWindow(period: BudgetPeriod, nowMs: number): BudgetWindow {
  switch (period) {
    case 'day': {
      const startMs = Math.floor(nowMs / DAY_MS) * DAY_MS;
      return { startMs, endMs: startMs + DAY_MS, label: new Date(startMs).toISOString().slice(0, 10) };
    }
    case 'week': {
      const dayStartMs = Math.floor(nowMs / DAY_MS) * DAY_MS;
      // getUTCDay: 0 Sunday .. 6 Saturday; days since Monday: (day + 6) % 7.
      const startMs = dayStartMs - ((new Date(dayStartMs).getUTCDay() + 6) % 7) * DAY_MS;
      return { startMs, endMs: startMs + 7 * DAY_MS, label: `w${new Date(startMs).toISOString().slice(0, 10)}` };
    }
    case 'month': {
      const date = new Date(nowMs);
      const startMs = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
      return {
        startMs,
        endMs: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
        label: new Date(startMs).toISOString().slice(0, 7),
      };
    }
    case 'total':
      return { startMs: 0, endMs: null, label: 'total' };
  }
}
