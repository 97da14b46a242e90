/**
 * `_metadata.timestamp`: the cached ISO 8601 text must be what `Date.prototype.toISOString` writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isoNow } from '../../src/http/metadata.ts';

test('isoNow writes what toISOString writes, across milliseconds, seconds, days and years', () => {
  const starts = [
    Date.now(),
    Date.UTC(2026, 11, 31, 23, 59, 58, 990),
    Date.UTC(2028, 1, 28, 23, 59, 59, 0),
    0,
    Date.UTC(9999, 11, 31, 23, 59, 58),
  ];
  for (const start of starts) {
    for (let offset = 0; offset < 3_000; offset += 1) {
      const now = start + offset;
      assert.equal(isoNow(now), new Date(now).toISOString());
    }
    // Back and forth, as the clock may step.
    for (const now of [start + 5, start - 1_001, start + 86_400_000 + 7, start + 7]) assert.equal(isoNow(now), new Date(now).toISOString());
  }
  assert.match(isoNow(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});
