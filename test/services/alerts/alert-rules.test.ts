// The alert rules (services/alerts/alert-rules.ts): every threshold the spend reached, each a rule of
// its own; the projected rule only past the minimum share of a period, under the amount, and when the
// rate runs over it, compared exactly in integers; nothing for a budget of no amount.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ruleName, rulesMet } from '../../../src/services/alerts/alert-rules.ts';
import type { BudgetSpend } from '../../../src/services/budgets/spend-observer.ts';

const DAY = 86_400_000;
const START = Date.UTC(2031, 0, 1);

function budget(spent: number, overrides: Partial<BudgetSpend> = {}): BudgetSpend {
  return {
    budgetId: 'bud_1',
    scope: 'organization',
    organizationId: 'org-rules',
    keyId: null,
    period: 'day',
    periodStartMs: START,
    periodEndMs: START + DAY,
    amountMicroUsd: 1_000_000,
    spentMicroUsd: spent,
    thresholdsPercent: [50, 80, 100],
    ...overrides,
  };
}

const names = (spent: number, atMs: number, overrides: Partial<BudgetSpend> = {}, minElapsed = 10) =>
  rulesMet(budget(spent, overrides), atMs, minElapsed).map(ruleName);

describe('alert rules', () => {
  const late = START + DAY - 1;

  test('each threshold reached is a rule, at exactly its share of the amount', () => {
    assert.deepEqual(names(499_999, late), []);
    assert.deepEqual(names(500_000, late), ['threshold:50']);
    assert.deepEqual(names(799_999, late), ['threshold:50']);
    assert.deepEqual(names(1_000_000, late), ['threshold:50', 'threshold:80', 'threshold:100']);
    assert.deepEqual(names(5_000_000, late), ['threshold:50', 'threshold:80', 'threshold:100']);
    assert.deepEqual(names(125_000, late, { thresholdsPercent: [12.5] }), ['threshold:12.5']);
  });

  test('repeated, unordered and non-positive thresholds never fire twice; a budget of no amount fires nothing', () => {
    assert.deepEqual(names(900_000, late, { thresholdsPercent: [50, 50, 30, 80, -5, Number.NaN] }), ['threshold:50', 'threshold:80']);
    assert.deepEqual(names(10, late, { amountMicroUsd: 0 }), []);
  });

  test('projected: after 10% of the period, under the amount, when spent / elapsed x length is over it', () => {
    // 9% of the day gone with 20% spent: too early to say.
    assert.deepEqual(names(200_000, START + DAY * 0.09), []);
    // 25% gone with 30% spent: 120% at the end of the day.
    const rules = rulesMet(budget(300_000), START + DAY * 0.25, 10);
    assert.deepEqual(rules, [{ kind: 'projected', projectedMicroUsd: 1_200_000 }]);
    // Exactly on course (25% of the day, 25% spent) is not over.
    assert.deepEqual(names(250_000, START + DAY * 0.25), []);
    // At 100% the threshold speaks, not the projection.
    assert.deepEqual(names(1_000_000, START + DAY * 0.5), ['threshold:50', 'threshold:80', 'threshold:100']);
    // The operator's minimum share counts.
    assert.deepEqual(names(300_000, START + DAY * 0.25, {}, 30), []);
    // A total budget has no period to project over.
    assert.deepEqual(names(300_000, START + DAY * 0.25, { period: 'total', periodStartMs: 0, periodEndMs: null }), []);
  });

  test('projection is exact where floating point is not (a month of a large budget)', () => {
    const month = Date.UTC(2031, 1, 1) - START;
    const amount = 9_000_000_000_000; // $9M
    // spent x length passes 2^53; one micro-dollar either side of the exact course decides.
    const elapsed = month / 3;
    const onCourse = amount / 3;
    const overrides = { period: 'month' as const, periodEndMs: START + month, amountMicroUsd: amount };
    assert.deepEqual(names(onCourse, START + elapsed, overrides), []);
    assert.deepEqual(names(onCourse + 1, START + elapsed, overrides), ['projected']);
  });
});
