/**
 * One route shape for every endpoint (docs/architecture.md "One route shape"): a handler turns the
 * request into a plain caller (`callerOf`), calls a use case with what the client sent, and hands the
 * answer to `reply.sendAnswer`. Decoding (query strings included) and encoding live in `formats/`, the
 * admission in the use case; the edge parks nothing on the request. Read from the source text, so a
 * route that bypasses the shape fails here before review.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Routes outside the shape, each for a reason: no use case or no caller behind them. */
const OUTSIDE_THE_SHAPE: Record<string, string> = {
  'auth-key.ts': 'key status: no limits and no admission; it reads the usage snapshot for `_metadata`',
  'operations.ts': 'health, readiness and metrics: no key, no `_metadata`',
  'root.ts': 'GET /: no key, no `_metadata`',
  'openapi.ts': 'the OpenAPI description: no key, no `_metadata`',
  'openapi-schemas.ts': 'schemas, not routes',
  'caller-of.ts': 'the caller itself',
  'generation-endpoints.ts': 'the generation endpoint table, not routes',
};

describe('one route shape (decode -> use case -> reply.sendAnswer)', () => {
  test('nothing in src/ parks an admission on the request', () => {
    const parking = sourceFiles(src).filter((path) =>
      /request\.admission\b|decorateRequest\(\s*'admission'|preHandler.*admit/.test(readFileSync(path, 'utf8')),
    );
    assert.deepEqual(parking, []);
  });

  test('every route file answers through a use case and reply.sendAnswer, reading nothing of the request itself', () => {
    const routes = join(src, 'routes');
    const offenders: string[] = [];
    for (const name of readdirSync(routes).filter((entry) => entry.endsWith('.ts'))) {
      if (name in OUTSIDE_THE_SHAPE) continue;
      const text = readFileSync(join(routes, name), 'utf8');
      if (!text.includes('reply.sendAnswer(')) offenders.push(`${name}: no reply.sendAnswer`);
      // The shape's bypasses: another way to answer, the key read directly, a query field parsed here.
      for (const [pattern, what] of [
        [/reply\.(sendData|send|code)\(/, 'answers without reply.sendAnswer'],
        [/request\.auth\b/, 'reads request.auth instead of callerOf(request)'],
        [/request\.query\.|request\.query\[/, 'parses the query itself (formats/ decode it)'],
        [/request\.headers\b/, 'reads headers itself'],
      ] as const) {
        if (pattern.test(text)) offenders.push(`${name}: ${what}`);
      }
    }
    assert.deepEqual(offenders, []);
  });
});
