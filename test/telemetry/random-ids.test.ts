// telemetry/random-ids.ts: trace and span ids drawn from a pooled random buffer, formatted once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PooledRandomIds } from '../../src/telemetry/random-ids.ts';

test('valid W3C ids (lowercase hex, 32 and 16 characters, never all zeros), distinct across pool refills', () => {
  const ids = new PooledRandomIds();
  const seen = new Set<string>();
  // 8 KiB of random bytes a pool: 5,000 of each kind crosses several refills, mixed.
  for (let index = 0; index < 5_000; index++) {
    const traceId = ids.generateTraceId();
    const spanId = ids.generateSpanId();
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.match(spanId, /^[0-9a-f]{16}$/);
    assert.notEqual(traceId, '0'.repeat(32));
    assert.notEqual(spanId, '0'.repeat(16));
    seen.add(traceId);
    seen.add(spanId);
  }
  assert.equal(seen.size, 10_000);
});

test('each instance draws its own bytes', () => {
  assert.notEqual(new PooledRandomIds().generateSpanId(), new PooledRandomIds().generateSpanId());
});
