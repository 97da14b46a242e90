/**
 * The usage page's figures: tokens, cost and requests per day and model (and per model over the range)
 * from the daily rollups, and
 * today's and this month's usage against the tier's limits from the AccountUsageReader, the very
 * reader `/v1/auth/key` answers from (so the two cannot disagree).
 */
import type { KeyPlanLimits } from '../accounts/plans.ts';
import { invalidParameter } from '../core/service-error.ts';
import type { DailyUsageRow, UsageRollupsRepository } from '../db/repositories/usage-rollups-repository.ts';
import type { AccountUsageReader } from '../services/account-usage.ts';

const DAY = 86_400_000;
/** The longest range one request may ask for. */
const MAX_DAYS = 366;

export interface UsageRange {
  /** `YYYY-MM-DD`, UTC. */
  from: string;
  to: string;
  fromDayStart: number;
  toDayStart: number;
}

function dayStartOf(text: string, param: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) throw invalidParameter(param, `${param} must be a date like 2026-11-01.`);
  const value = Date.parse(`${text}T00:00:00Z`);
  if (Number.isNaN(value)) throw invalidParameter(param, `${param} is not a calendar date.`);
  return value;
}

/** `from` and `to` (inclusive, UTC dates), or `days` back from today (default 30). */
export function parseUsageRange(query: Record<string, string | undefined>, now: number): UsageRange {
  const today = Math.floor(now / DAY) * DAY;
  let fromDayStart: number;
  let toDayStart = today;
  if (query['from'] !== undefined || query['to'] !== undefined) {
    fromDayStart = dayStartOf(query['from'] ?? '', 'from');
    toDayStart = query['to'] === undefined ? today : dayStartOf(query['to'], 'to');
  } else {
    const days = query['days'] === undefined ? 30 : Number(query['days']);
    if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS)
      throw invalidParameter('days', `days must be a whole number from 1 to ${MAX_DAYS}.`);
    fromDayStart = today - (days - 1) * DAY;
  }
  if (toDayStart < fromDayStart) throw invalidParameter('to', 'to must not be before from.');
  if ((toDayStart - fromDayStart) / DAY + 1 > MAX_DAYS) throw invalidParameter('from', `A range covers at most ${MAX_DAYS} days.`);
  const iso = (value: number): string => new Date(value).toISOString().slice(0, 10);
  return { from: iso(fromDayStart), to: iso(toDayStart), fromDayStart, toDayStart };
}

export interface UsageReportInput {
  rollups: UsageRollupsRepository;
  usage: AccountUsageReader;
  organizationId: string;
  /** The tier whose daily and monthly limits the organization is measured against. */
  tier: string;
  /** The organization's plan limits (accounts/plans.ts), when plans are on: they decide the day and month. */
  limits?: KeyPlanLimits;
  range: UsageRange;
}

export interface ModelUsage {
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export async function usageReport(input: UsageReportInput) {
  const [rows, limits] = await Promise.all([
    input.rollups.daily(input.organizationId, input.range.fromDayStart, input.range.toDayStart),
    // Daily and monthly figures belong to the organization; the key id only selects per-minute buckets, unused here.
    input.usage.read({
      organizationId: input.organizationId,
      keyId: 'dashboard',
      tier: input.tier,
      ...(input.limits === undefined ? {} : { limits: input.limits }),
    }),
  ]);
  const totals = { requests: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  for (const row of rows) {
    totals.requests += row.requests;
    totals.input_tokens += row.inputTokens;
    totals.output_tokens += row.outputTokens;
    totals.cost_usd += row.costUsd;
  }
  return {
    object: 'dashboard.usage',
    organization: input.organizationId,
    from: input.range.from,
    to: input.range.to,
    data: rows.map(toWire),
    totals,
    by_model: byModel(rows),
    limits: { tier: input.tier, daily: limits.daily, monthly: limits.monthly },
  };
}

/** The range's usage per model (days summed), most tokens first. */
function byModel(rows: readonly DailyUsageRow[]): ModelUsage[] {
  const models = new Map<string, ModelUsage>();
  for (const row of rows) {
    const sum = models.get(row.model) ?? { model: row.model, requests: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
    sum.requests += row.requests;
    sum.input_tokens += row.inputTokens;
    sum.output_tokens += row.outputTokens;
    sum.cost_usd += row.costUsd;
    models.set(row.model, sum);
  }
  return [...models.values()].sort(
    (first, second) => second.input_tokens + second.output_tokens - (first.input_tokens + first.output_tokens),
  );
}

function toWire(row: DailyUsageRow) {
  return {
    date: new Date(row.dayStart).toISOString().slice(0, 10),
    model: row.model,
    requests: row.requests,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    cached_tokens: row.cachedTokens,
    reasoning_tokens: row.reasoningTokens,
    cost_usd: row.costUsd,
  };
}

/**
 * A CSV text cell: quoted (it may hold commas or quotes), and a leading `=`, `+`, `-`, `@`, tab or
 * carriage return neutralised with an apostrophe so a spreadsheet shows it instead of evaluating a
 * formula (OWASP "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection).
 */
export function csvTextCell(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return `"${safe.replaceAll('"', '""')}"`;
}

/** CSV with a header row; model names are text cells (csvTextCell). */
export function usageCsv(rows: readonly DailyUsageRow[]): string {
  const lines = ['date,model,requests,input_tokens,output_tokens,cached_tokens,reasoning_tokens,cost_usd'];
  for (const row of rows) {
    lines.push(
      [
        new Date(row.dayStart).toISOString().slice(0, 10),
        csvTextCell(row.model),
        row.requests,
        row.inputTokens,
        row.outputTokens,
        row.cachedTokens,
        row.reasoningTokens,
        row.costUsd.toFixed(6),
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}
