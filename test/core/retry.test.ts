// core/retry.ts: the one retry-after reader and the one backoff, and the policies of their callers
// (generation retries, batch lines, batch steps and claims) keeping the floors and caps they had.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { lineRetryPolicy, retryDelayMs } from '../../src/batches/line-outcome.ts';
import { backoff, parseRetryAfter, retryDelay } from '../../src/core/retry.ts';
import { DEFAULT_RETRY_POLICY, retryDelay as generationRetryDelay } from '../../src/services/generation/retry-policy.ts';

const NOW = Date.UTC(2030, 0, 1);

describe('parseRetryAfter', () => {
  test('retry-after-ms first, then retry-after in seconds or as an HTTP date', () => {
    assert.equal(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, NOW), 250);
    assert.equal(parseRetryAfter({ 'retry-after-ms': '12.5' }, NOW), 12.5);
    assert.equal(parseRetryAfter({ 'retry-after': '7' }, NOW), 7_000);
    assert.equal(parseRetryAfter({ 'retry-after': ' 1.5 ' }, NOW), 1_500);
    assert.equal(parseRetryAfter({ 'retry-after': new Date(NOW + 30_000).toUTCString() }, NOW), 30_000);
  });

  test('no header, an empty one or one that is no delay: null; a negative or past delay: 0', () => {
    assert.equal(parseRetryAfter({}, NOW), null);
    assert.equal(parseRetryAfter({ 'retry-after': '' }, NOW), null);
    assert.equal(parseRetryAfter({ 'retry-after': 'soon' }, NOW), null);
    assert.equal(parseRetryAfter({ 'retry-after-ms': 'soon', 'retry-after': '2' }, NOW), 2_000, 'a bad retry-after-ms falls back');
    assert.equal(parseRetryAfter({ 'retry-after': '-3' }, NOW), 0);
    assert.equal(parseRetryAfter({ 'retry-after-ms': '-3' }, NOW), 0);
    assert.equal(parseRetryAfter({ 'retry-after': new Date(NOW - 60_000).toUTCString() }, NOW), 0);
  });

  test('the first of repeated values, and numbers as the line executor holds them', () => {
    assert.equal(parseRetryAfter({ 'retry-after': ['4', '9'] }, NOW), 4_000);
    assert.equal(parseRetryAfter({ 'retry-after': 5 }, NOW), 5_000);
  });
});

describe('backoff', () => {
  test('capped exponential: initial * 2^attempt, at most maxMs; no jitter by default', () => {
    const policy = { initialMs: 100, maxMs: 1_000 };
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((attempt) => backoff(policy, attempt)),
      [100, 200, 400, 800, 1_000, 1_000],
    );
    assert.equal(backoff(policy, 10_000), 1_000, 'a runaway attempt count stays at the cap');
    assert.equal(backoff(policy, -1), 100, 'never below the first delay');
  });

  test('jitter scales the delay into [1 - jitter, 1) and rounds it', () => {
    const policy = { initialMs: 250, maxMs: 4_000, jitter: 0.5 };
    assert.equal(
      backoff(policy, 0, () => 0),
      125,
    );
    assert.equal(
      backoff(policy, 1, () => 0.5),
      375,
    );
    assert.equal(
      backoff(policy, 6, () => 0.999),
      3_998,
    );
    assert.equal(
      backoff({ initialMs: 1_000, maxMs: 1_000, jitter: 1 }, 0, () => 0.3333),
      333,
    );
  });
});

describe('retryDelay', () => {
  test('the delay asked for, within the policy bounds; else the backoff', () => {
    const policy = { initialMs: 1_000, maxMs: 8_000, minRetryAfterMs: 100, maxRetryAfterMs: 5_000 };
    assert.equal(retryDelay(policy, 0, 20), 100);
    assert.equal(retryDelay(policy, 0, 2_000), 2_000);
    assert.equal(retryDelay(policy, 0, 60_000), 5_000);
    assert.equal(retryDelay(policy, 2, null), 4_000);
    assert.equal(retryDelay({ initialMs: 1, maxMs: 1 }, 0, 0), 0, 'no bounds by default');
  });
});

describe('the callers keep their values', () => {
  test('generation retries: 250 ms doubled up to 4 s with jitter factor 0.5 + random / 2, retry-after capped at 10 s', () => {
    for (const random of [0, 0.25, 0.5, 0.999]) {
      for (let retryIndex = 0; retryIndex < 8; retryIndex++) {
        const before = Math.round(Math.min(250 * 2 ** retryIndex, 4_000) * (0.5 + random / 2));
        assert.equal(
          generationRetryDelay(DEFAULT_RETRY_POLICY, retryIndex, null, () => random),
          before,
        );
      }
    }
    assert.equal(generationRetryDelay(DEFAULT_RETRY_POLICY, 0, 3_000, Math.random), 3_000);
    assert.equal(generationRetryDelay(DEFAULT_RETRY_POLICY, 0, 3_600_000, Math.random), 10_000);
    assert.equal(generationRetryDelay(DEFAULT_RETRY_POLICY, 0, 0, Math.random), 0, 'retry-after 0: at once');
  });

  test('batch lines: retry-after at least 100 ms and not capped; else 1 s doubled up to maxBackoffMs', () => {
    assert.deepEqual(lineRetryPolicy(60_000), { initialMs: 1_000, maxMs: 60_000, minRetryAfterMs: 100 });
    assert.equal(retryDelayMs({ 'retry-after': '0' }, 0, 60_000, NOW), 100);
    assert.equal(retryDelayMs({ 'retry-after': new Date(NOW - 5_000).toUTCString() }, 0, 60_000, NOW), 100);
    assert.equal(retryDelayMs({ 'retry-after': '3600' }, 0, 60_000, NOW), 3_600_000);
    assert.deepEqual(
      [0, 1, 5, 6, 20, 40].map((attempts) => retryDelayMs({}, attempts, 60_000, NOW)),
      [1_000, 2_000, 32_000, 60_000, 60_000, 60_000],
    );
  });
});
