/**
 * Headers, the 429 error and UsageInfo, built from real admissions of the in-process limit store.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmitResult, LimitPolicy } from '../../../src/limits/limit-store.ts';
import { MemoryLimitStore } from '../../../src/limits/memory/memory-limit-store.ts';
import { formatResetDuration, rateLimitError, rateLimitHeaders } from '../../../src/services/metering/rate-limit-headers.ts';
import { keyUsageInfo, userTotalUsage, UNLIMITED_TOKENS } from '../../../src/services/metering/usage-info.ts';

const subject = { organizationId: 'org-headers', keyId: 'key-headers' };

function storeAt(iso: string): { store: MemoryLimitStore; clock: { ms: number; now(): number } } {
  const clock = {
    ms: Date.parse(iso),
    now(): number {
      return this.ms;
    },
  };
  return { store: new MemoryLimitStore({ clock }), clock };
}

function refused(result: AdmitResult) {
  if (result.admitted) throw new Error('expected a refusal');
  return result;
}

describe('formatResetDuration', () => {
  test('follows the OpenAI header style', () => {
    assert.equal(formatResetDuration(0), '0s');
    assert.equal(formatResetDuration(-5), '0s');
    assert.equal(formatResetDuration(20), '20ms');
    assert.equal(formatResetDuration(1000), '1s');
    assert.equal(formatResetDuration(59_500), '59.5s');
    assert.equal(formatResetDuration(60_000), '1m0s');
    assert.equal(formatResetDuration(6 * 60_000 + 1234), '6m1.234s');
    assert.equal(formatResetDuration(3_600_000), '1h0m0s');
  });

  test('writes the same text as formatting the seconds with toFixed(3), for every millisecond of two minutes and beyond', () => {
    const reference = (milliseconds: number): string => {
      const total = Math.max(0, Math.ceil(milliseconds));
      if (total === 0) return '0s';
      if (total < 1000) return `${total}ms`;
      const hours = Math.floor(total / 3_600_000);
      const minutes = Math.floor((total % 3_600_000) / 60_000);
      const seconds = `${Number(((total % 60_000) / 1000).toFixed(3))}s`;
      if (hours > 0) return `${hours}h${minutes}m${seconds}`;
      return minutes > 0 ? `${minutes}m${seconds}` : seconds;
    };
    const samples: number[] = [];
    for (let milliseconds = 0; milliseconds <= 120_000; milliseconds++) samples.push(milliseconds);
    samples.push(0.4, 999.2, 1000.5, 59_999.01, 3_600_000 + 5, 3_600_000 + 59_050, 86_400_000 - 1, 31 * 86_400_000 + 12_345);
    for (const milliseconds of samples) assert.equal(formatResetDuration(milliseconds), reference(milliseconds), String(milliseconds));
  });
});

describe('rateLimitHeaders', () => {
  test('an admitted request gets the six x-ratelimit headers and no retry-after', async () => {
    const { store } = storeAt('2025-03-10T12:34:45.500Z');
    const limits: LimitPolicy = { requestsPerMinute: 60, tokensPerMinute: 10_000, tokensPerDay: 0, tokensPerMonth: 0 };
    const headers = rateLimitHeaders(await store.admit({ subject, policy: limits, estimatedTokens: 1500 }));
    assert.deepEqual(headers, {
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '14.5s',
      'x-ratelimit-limit-tokens': '10000',
      'x-ratelimit-remaining-tokens': '8500',
      'x-ratelimit-reset-tokens': '14.5s',
    });
  });

  test('unlimited windows announce nothing', async () => {
    const { store } = storeAt('2025-03-10T12:34:45Z');
    const headers = rateLimitHeaders(
      await store.admit({
        subject,
        policy: { requestsPerMinute: 0, tokensPerMinute: 500, tokensPerDay: 0, tokensPerMonth: 0 },
        estimatedTokens: 100,
      }),
    );
    assert.deepEqual(Object.keys(headers), ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens']);
  });
});

describe('rateLimitError: one 429 per SPEC code', () => {
  test('rpm_exceeded', async () => {
    const { store } = storeAt('2025-03-10T12:34:45Z');
    const limits: LimitPolicy = { requestsPerMinute: 1, tokensPerMinute: 1000, tokensPerDay: 0, tokensPerMonth: 0 };
    await store.admit({ subject, policy: limits, estimatedTokens: 10 });
    const error = rateLimitError(refused(await store.admit({ subject, policy: limits, estimatedTokens: 10 })));
    assert.equal(error.status, 429);
    assert.equal(error.type, 'rate_limit_exceeded');
    assert.equal(error.code, 'rpm_exceeded');
    assert.equal(error.param, null);
    assert.deepEqual(error.details, { limit: 1, remaining: 0, reset: '2025-03-10T12:35:00.000Z', retry_after: 15 });
    assert.deepEqual(error.headers, {
      'x-ratelimit-limit-requests': '1',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '15s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '990',
      'x-ratelimit-reset-tokens': '15s',
      'retry-after': '15',
    });
    assert.match(error.message, /1 requests per minute/);
  });

  test('tpm_exceeded', async () => {
    const { store } = storeAt('2025-03-10T12:34:59.250Z');
    const limits: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 1000, tokensPerDay: 0, tokensPerMonth: 0 };
    await store.admit({ subject, policy: limits, estimatedTokens: 900 });
    const error = rateLimitError(refused(await store.admit({ subject, policy: limits, estimatedTokens: 200 })));
    assert.equal(error.code, 'tpm_exceeded');
    assert.deepEqual(error.details, { limit: 1000, remaining: 100, reset: '2025-03-10T12:35:00.000Z', retry_after: 1 });
    assert.equal(error.headers['retry-after'], '1');
    assert.equal(error.headers['x-ratelimit-reset-tokens'], '750ms');
    assert.match(error.message, /needs up to 200/);
  });

  test('user_total_daily_limit_exceeded', async () => {
    const { store } = storeAt('2025-03-10T23:00:00Z');
    const limits: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 100, tokensPerMonth: 0 };
    await store.admit({ subject, policy: limits, estimatedTokens: 100 });
    const error = rateLimitError(refused(await store.admit({ subject, policy: limits, estimatedTokens: 1 })));
    assert.equal(error.code, 'user_total_daily_limit_exceeded');
    assert.deepEqual(error.details, { limit: 100, remaining: 0, reset: '2025-03-11T00:00:00.000Z', retry_after: 3600 });
    assert.deepEqual(error.headers, { 'retry-after': '3600' });
  });

  test('user_total_monthly_limit_exceeded (Free: 10,000 tokens a month)', async () => {
    const { store } = storeAt('2025-02-28T12:00:00Z');
    const limits: LimitPolicy = { requestsPerMinute: 20, tokensPerMinute: 10_000, tokensPerDay: 0, tokensPerMonth: 10_000 };
    await store.admit({ subject, policy: limits, estimatedTokens: 9_990 });
    const error = rateLimitError(refused(await store.admit({ subject, policy: limits, estimatedTokens: 11 })));
    assert.equal(error.code, 'user_total_monthly_limit_exceeded');
    assert.deepEqual(error.details, { limit: 10_000, remaining: 10, reset: '2025-03-01T00:00:00.000Z', retry_after: 43_200 });
    assert.equal(error.headers['retry-after'], '43200');
    assert.equal(error.headers['x-ratelimit-remaining-requests'], '19');
  });
});

describe('UsageInfo', () => {
  test('key usage_info and _metadata.user_total_usage come from the same counters', async () => {
    const { store, clock } = storeAt('2025-01-31T10:00:00Z');
    const limits: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 1000, tokensPerMonth: 10_000 };
    const result = await store.admit({ subject, policy: limits, estimatedTokens: 300 });
    assert.deepEqual(userTotalUsage(result.figures), { used: 300, limit: 10_000, remaining: 9700, reset_at: '2025-02-01T00:00:00.000Z' });
    clock.ms = Date.parse('2025-01-31T11:00:00Z');
    assert.deepEqual(keyUsageInfo(await store.usage(subject, limits)), {
      daily: { used: 300, limit: 1000, remaining: 700, reset_at: '2025-02-01T00:00:00.000Z' },
      monthly: { used: 300, limit: 10_000, remaining: 9700, reset_at: '2025-02-01T00:00:00.000Z' },
    });
  });

  test('user_total_usage falls back to the daily window when months are unlimited', async () => {
    const { store } = storeAt('2025-01-15T10:00:00Z');
    const limits: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 1000, tokensPerMonth: 0 };
    const result = await store.admit({ subject, policy: limits, estimatedTokens: 10 });
    assert.deepEqual(userTotalUsage(result.figures), { used: 10, limit: 1000, remaining: 990, reset_at: '2025-01-16T00:00:00.000Z' });
  });

  test('an unlimited window (limit 0 in config) reads as UNLIMITED_TOKENS left, never as exhausted', async () => {
    const { store } = storeAt('2025-01-15T10:00:00Z');
    const limits: LimitPolicy = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0 };
    const result = await store.admit({ subject, policy: limits, estimatedTokens: 25 });
    const total = userTotalUsage(result.figures);
    assert.deepEqual(total, { used: 25, limit: UNLIMITED_TOKENS, remaining: UNLIMITED_TOKENS, reset_at: '2025-02-01T00:00:00.000Z' });
    assert.ok(Number.isInteger(total.remaining) && total.remaining > 0);
    const info = keyUsageInfo(result.figures);
    assert.deepEqual(
      [info.daily.limit, info.daily.remaining, info.monthly.remaining],
      [UNLIMITED_TOKENS, UNLIMITED_TOKENS, UNLIMITED_TOKENS],
    );
  });
});
