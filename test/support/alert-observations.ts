/**
 * What the budget alert tests feed the runtime's spend observer (the budgets' settlement does it in
 * production): observations of month budgets, the shortened delivery timing the tests run with, and a
 * wait until every observation is written and the outbox is empty.
 */
import type { ConfigInput } from '../../src/config/index.ts';
import type { BudgetSpend, SpendObservation } from '../../src/services/budgets/spend-observer.ts';
import type { TestServer } from './test-server.ts';
import { until } from './until.ts';

/** One dollar in micro-USD. */
export const DOLLAR = 1_000_000;

/**
 * Test timing: retries every 50-200 ms for 1.5 s instead of 10 s-1 h for a day; receivers on 127.0.0.1.
 * The attempt timeout stays long: an attempt cut short on a loaded machine after the receiver got it
 * would be sent again, and the tests count deliveries exactly.
 */
export const FAST_ALERTS: ConfigInput['alerts'] = {
  webhooks: { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 10_000 },
  delivery: { firstRetryMs: 50, maxRetryMs: 200, retryForMs: 1_500, pollMs: 50, leaseMs: 30_000 },
};

/** 00:00 UTC of the 1st of this month (`offset` 0), the next (1), ... in ms. */
export const monthStart = (offset: number) => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1);
};

/** One settlement's observation of one month budget (amount $1 unless given), near the end of its period. */
export function spend(
  budgetId: string,
  spentMicroUsd: number,
  options: { organization?: string; month?: number; amount?: number; atMs?: number; scope?: 'organization' | 'key'; keyId?: string } = {},
): SpendObservation {
  const organizationId = options.organization ?? 'org-acme';
  const periodStartMs = monthStart(options.month ?? 0);
  const periodEndMs = monthStart((options.month ?? 0) + 1);
  const budget: BudgetSpend = {
    budgetId,
    scope: options.scope ?? 'organization',
    organizationId,
    keyId: options.keyId ?? null,
    period: 'month',
    periodStartMs,
    periodEndMs,
    amountMicroUsd: options.amount ?? DOLLAR,
    spentMicroUsd,
    thresholdsPercent: [50, 80, 100],
  };
  return {
    requestId: `req_${budgetId}_${spentMicroUsd}`,
    organizationId,
    keyId: options.keyId ?? 'key_test',
    // Near the period's end: the rate projects no overrun, so only thresholds fire here.
    atMs: options.atMs ?? periodEndMs - 60_000,
    budgets: [budget],
  };
}

/** Every observation written and nothing left pending in the outbox. */
export async function settled(server: TestServer): Promise<void> {
  await server.runtime.alerts.spendObserver.flush();
  await until(async () => {
    const pending = await server.runtime.alerts.endpoints.deliveries({ scope: null, status: 'pending', limit: 1 });
    return pending.rows.length === 0 ? true : undefined;
  }, 'the outbox to empty');
}
