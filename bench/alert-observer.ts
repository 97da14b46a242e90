/**
 * What budget alerts add to a request: the CPU of one `observe()` call (the only part of alerts on the
 * request path), for an observation of two budgets (the key's and the organization's), in the cases a
 * settlement meets: under every threshold; past 50% and 80% with both already written (the common case
 * late in a period: an LRU hit per rule, no write); early in a period where the projected rule is
 * evaluated in integers. The observer writes to a real SQLite file. Figures are printed, never asserted.
 *
 * Run: node --import tsx bench/alert-observer.ts [calls per round, default 200000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/db/database.ts';
import { BudgetAlertsRepository } from '../src/db/repositories/budget-alerts-repository.ts';
import { BudgetAlerts } from '../src/services/alerts/budget-alerts.ts';
import type { BudgetSpend, SpendObservation } from '../src/services/budgets/spend-observer.ts';

const CALLS = Number(process.argv[2] ?? 200_000);
const ROUNDS = 5;
const DAY = 86_400_000;
const START = Date.UTC(2031, 0, 1);
const END = Date.UTC(2031, 1, 1);

function budget(id: string, spent: number, scope: 'organization' | 'key'): BudgetSpend {
  return {
    budgetId: id,
    scope,
    organizationId: 'org-bench',
    keyId: scope === 'key' ? 'key_bench' : null,
    period: 'month',
    periodStartMs: START,
    periodEndMs: END,
    amountMicroUsd: 50_000_000,
    spentMicroUsd: spent,
    thresholdsPercent: [50, 80, 100],
  };
}

const observation = (spentShare: number, atMs: number): SpendObservation => ({
  requestId: 'req_bench',
  organizationId: 'org-bench',
  keyId: 'key_bench',
  atMs,
  budgets: [budget('bud_key', spentShare * 50_000_000, 'key'), budget('bud_org', spentShare * 40_000_000, 'organization')],
});

/** CPU nanoseconds per call, the median of `ROUNDS` rounds of `CALLS` calls. */
function measure(observer: BudgetAlerts, input: SpendObservation): number {
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let call = 0; call < CALLS; call++) observer.observe(input);
    const used = process.cpuUsage(before);
    rounds.push(((used.user + used.system) * 1000) / CALLS);
  }
  return rounds.sort((left, right) => left - right)[Math.floor(ROUNDS / 2)]!;
}

const directory = mkdtempSync(join(tmpdir(), 'switchyard-alert-bench-'));
const database = openDatabase(`sqlite:${join(directory, 'bench.db')}`);
try {
  await database.migrate();
  const config = loadConfig({ env: {}, overrides: { dataDir: directory } });
  const observer = new BudgetAlerts({
    repository: new BudgetAlertsRepository(database.db),
    config: config.alerts,
    operator: 'bench',
    logger: pino({ level: 'silent' }),
    onQueued: () => undefined,
  });
  const late = END - DAY;
  const under = measure(observer, observation(0.3, late));
  observer.observe(observation(0.85, late));
  await observer.flush();
  const written = measure(observer, observation(0.85, late));
  const early = measure(observer, observation(0.15, START + 5 * DAY));
  await observer.flush();
  console.log(`observe() CPU per call, two budgets, median of ${ROUNDS} rounds of ${CALLS} calls:`);
  console.log(`  under every threshold:                 ${under.toFixed(0)} ns`);
  console.log(`  past 50% and 80%, already written:      ${written.toFixed(0)} ns`);
  console.log(`  early in the period (projection in integers, under the rate): ${early.toFixed(0)} ns`);
  await observer.close();
} finally {
  await database.close();
  rmSync(directory, { recursive: true, force: true });
}
