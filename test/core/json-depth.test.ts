// The request-JSON nesting limit (core/json-depth.ts): 64 levels pass, 65 do not, the param names the
// outermost parameters, and the walk itself never recurses past the limit (10,000 and 1,000,000 levels).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findTooDeepValue, MAX_JSON_DEPTH } from '../../src/core/json-depth.ts';

/** `levels` nested objects `{"a":{"a":...1}}` as a parsed value (built from text: no recursion here either). */
function nestedObjects(levels: number): unknown {
  return JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
}

describe('findTooDeepValue', () => {
  test('the limit is 64 levels: the body itself is level 1', () => {
    assert.equal(MAX_JSON_DEPTH, 64);
    assert.equal(findTooDeepValue(nestedObjects(64)), undefined);
    const refused = findTooDeepValue(nestedObjects(65));
    assert.ok(refused !== undefined);
    assert.equal(refused.param, 'a.a.a.a.a.a');
    assert.match(refused.message, /at most 64 levels/);
    assert.equal(findTooDeepValue(JSON.parse(`${'['.repeat(64)}${']'.repeat(64)}`)), undefined);
    assert.ok(findTooDeepValue(JSON.parse(`${'['.repeat(65)}${']'.repeat(65)}`)) !== undefined);
  });

  test('scalars, strings and wide but shallow bodies pass', () => {
    for (const value of [null, 1, 'text', true, [], {}]) assert.equal(findTooDeepValue(value), undefined);
    const wide = { input: Array.from({ length: 100_000 }, (_, index) => `text ${index}`), nested: [{ a: [{ b: 1 }] }] };
    assert.equal(findTooDeepValue(wide), undefined);
    // A string that looks deep is only a string.
    assert.equal(findTooDeepValue({ text: '{"a":'.repeat(10_000) }), undefined);
  });

  test('param: the path to the deep value, arrays as [i], at most six segments, prefixed for batch lines', () => {
    const deep = JSON.parse(
      `{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":${'{"x":'.repeat(10_000)}1${'}'.repeat(10_000)}}}]}`,
    );
    assert.equal(findTooDeepValue(deep)?.param, 'tools[0].function.parameters.x.x');
    assert.equal(findTooDeepValue(deep, MAX_JSON_DEPTH, 'body')?.param, 'body.tools[0].function.parameters.x.x');
    const longKey = 'k'.repeat(1000);
    const param = findTooDeepValue(JSON.parse(`${`{"${longKey}":`.repeat(70)}1${'}'.repeat(70)}`))?.param ?? '';
    assert.ok(param.length < 6 * 70, `a hostile key is shortened in the param (${param.length} characters)`);
  });

  test('100,000 levels: refused without a stack overflow, faster than parsing them', () => {
    const text = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    // No wall-clock bound (a loaded machine breaks one): the walk stops at the depth limit, so it costs
    // less than JSON.parse of the same 100,000 levels, measured here (the fastest of three rounds each).
    const fastest = (work: () => unknown): number =>
      Math.min(
        ...[0, 1, 2].map(() => {
          const started = performance.now();
          work();
          return performance.now() - started;
        }),
      );
    const value: unknown = JSON.parse(text);
    assert.ok(findTooDeepValue(value) !== undefined);
    const walkMs = fastest(() => findTooDeepValue(value));
    const parseMs = fastest(() => JSON.parse(text));
    assert.ok(walkMs < parseMs, `the walk took ${walkMs.toFixed(2)} ms, parsing ${parseMs.toFixed(2)} ms`);
  });
});
