// What an alert says (services/alerts/alert-messages.ts): money from integer micro-USD without float
// drift, chosen names made safe for one line of mail (no header or line injection, no bidi tricks),
// the email naming the budget, the spend, the period and its reset, and the versioned payload.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FiredAlert } from '../../../src/db/repositories/budget-alerts-repository.ts';
import { alertEmail, alertPayload, eventIdOf, formatUsd, oneLine } from '../../../src/services/alerts/alert-messages.ts';

const alert: FiredAlert = {
  id: 'alert_AbC123',
  budgetId: 'bud_team',
  periodStart: Date.UTC(2031, 4, 1),
  rule: 'threshold:80',
  organizationId: 'org-acme',
  keyId: 'key_1',
  scope: 'key',
  period: 'month',
  periodEnd: Date.UTC(2031, 5, 1),
  amountMicroUsd: 50_000_000,
  spentMicroUsd: 40_123_456,
  thresholdPercent: 80,
  projectedMicroUsd: null,
  requestId: 'req_9',
  createdAt: Date.UTC(2031, 4, 20, 12),
};

describe('alert messages', () => {
  test('money from micro-USD: at least cents, exact to the micro-dollar, thousands grouped', () => {
    assert.equal(formatUsd(50_000_000), '$50.00');
    assert.equal(formatUsd(1_234_567), '$1.234567');
    assert.equal(formatUsd(100_000), '$0.10');
    assert.equal(formatUsd(1), '$0.000001');
    assert.equal(formatUsd(1_234_567_890_000_000), '$1,234,567,890.00');
    assert.equal(formatUsd(-2_500_000), '-$2.50');
  });

  test('a chosen name is one safe line', () => {
    assert.equal(oneLine('ci\r\nBcc: victim@example.com'), 'ci Bcc: victim@example.com');
    assert.equal(oneLine('evil\u202Egnp.exe'), 'evil gnp.exe');
    assert.equal(oneLine('x'.repeat(150)).length, 100);
  });

  test('the email names the budget, the spend, the period and its reset; the subject is one line', () => {
    const email = alertEmail(alert, 'ci\nrunner', 'acme-ai');
    assert.equal(email.subject, 'Budget alert: 80% of the monthly budget of key "ci runner" in organization org-acme reached');
    assert.equal(
      email.text,
      [
        'The monthly budget of key "ci runner" in organization org-acme has reached 80% of its amount.',
        '',
        'Spent:      $40.123456 of $50.00 (80.2%)',
        'Period:     month, 2031-05-01 00:00 UTC to 2031-06-01 00:00 UTC',
        'Resets at:  2031-06-01 00:00 UTC',
        'Budget:     bud_team',
        '',
        'Each threshold is sent once per period. Requests that would go over the budget are refused until it resets.',
        '',
        '-- acme-ai (Switchyard)',
        '',
      ].join('\n'),
    );
    const projected = alertEmail(
      { ...alert, rule: 'projected', thresholdPercent: null, projectedMicroUsd: 61_000_000, scope: 'organization', keyId: null },
      null,
      'acme-ai',
    );
    assert.equal(projected.subject, 'Budget alert: the monthly budget of organization org-acme is projected to be exceeded');
    assert.match(projected.text, /^At its current rate, the monthly budget of organization org-acme will be exceeded before it resets\.\n/);
    assert.match(projected.text, /\nProjected: {2}\$61\.00 by the end of the period\n/);
  });

  test('the payload is versioned, with the event id derived from the alert', () => {
    const payload = JSON.parse(alertPayload(alert, 'ci runner'));
    assert.deepEqual(payload, {
      id: eventIdOf(alert.id),
      type: 'budget.threshold_reached',
      version: 1,
      timestamp: '2031-05-20T12:00:00.000Z',
      data: {
        organization: 'org-acme',
        budget: {
          id: 'bud_team',
          scope: 'key',
          key_id: 'key_1',
          key_name: 'ci runner',
          period: 'month',
          amount_micro_usd: 50_000_000,
          period_start: '2031-05-01T00:00:00.000Z',
          resets_at: '2031-06-01T00:00:00.000Z',
        },
        spent_micro_usd: 40_123_456,
        threshold_percent: 80,
        request_id: 'req_9',
      },
    });
    assert.equal(eventIdOf(alert.id), 'evt_AbC123');
  });
});
