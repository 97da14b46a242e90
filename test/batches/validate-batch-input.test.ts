// Batch input validation: SPEC "Batch input line" rules, line numbers in errors, streaming in chunks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NewBatchRequest } from '../../src/batches/batch-records.ts';
import { validateBatchInput, type BatchInputRules } from '../../src/batches/validate-batch-input.ts';

const RULES: BatchInputRules = { endpoint: '/v1/chat/completions', maxLineBytes: 10_000, maxRequests: 50_000 };

function line(customId: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'm', messages: [] },
    ...overrides,
  });
}

async function validate(content: string | string[], rules: BatchInputRules = RULES) {
  const accepted: NewBatchRequest[][] = [];
  const chunks = Array.isArray(content) ? content : [content];
  async function* source() {
    for (const chunk of chunks) yield Buffer.from(chunk);
  }
  const summary = await validateBatchInput(source(), rules, async (requests) => {
    accepted.push(requests);
  });
  return { summary, accepted, requests: accepted.flat() };
}

describe('validateBatchInput', () => {
  test('a valid file: every request, in order, with its line number and body as JSON text', async () => {
    const { summary, requests } = await validate(`${line('a')}\n${line('b', { body: { x: 1 } })}\n`);
    assert.deepEqual(summary, { total: 2, errors: [] });
    assert.deepEqual(requests, [
      { line: 1, customId: 'a', body: '{"model":"m","messages":[]}' },
      { line: 2, customId: 'b', body: '{"x":1}' },
    ]);
  });

  test('lines split across chunks, CRLF endings, a BOM, blank lines and no final newline', async () => {
    const text = `\uFEFF${line('a')}\r\n\r\n   \r\n${line('b')}`;
    const { summary, requests } = await validate([text.slice(0, 7), text.slice(7, 50), text.slice(50)]);
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(
      requests.map((request) => [request.line, request.customId]),
      [
        [1, 'a'],
        [4, 'b'],
      ],
    );
  });

  test('every kind of bad line is reported with its line number and param', async () => {
    const content = [
      line('ok-1'),
      'not json',
      '[1,2]',
      JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: {} }),
      line('', {}),
      line('c5', { method: 'GET' }),
      line('c6', { url: '/v1/embeddings' }),
      line('c7', { body: 'text' }),
      line('c8', { body: undefined }),
      line('ok-1'),
      line('c10', { body: { stream: true } }),
      line('c11', { custom_id: 11 }),
    ].join('\n');
    const { summary, requests } = await validate(content);
    assert.deepEqual(requests, [], 'nothing is handed over once an error was seen');
    assert.deepEqual(
      summary.errors.map((error) => [error.code, error.line, error.param]),
      [
        ['invalid_jsonl', 2, null],
        ['invalid_jsonl', 3, null],
        ['invalid_jsonl', 4, 'custom_id'],
        ['invalid_jsonl', 5, 'custom_id'],
        ['invalid_jsonl', 6, 'method'],
        ['invalid_jsonl', 7, 'url'],
        ['invalid_jsonl', 8, 'body'],
        ['invalid_jsonl', 9, 'body'],
        ['invalid_jsonl', 10, 'custom_id'],
        ['invalid_jsonl', 11, 'body.stream'],
        ['invalid_jsonl', 12, 'custom_id'],
      ],
    );
    assert.match(summary.errors[8]!.message, /already used on line 1/);
    assert.match(summary.errors[5]!.message, /'\/v1\/chat\/completions'/);
  });

  test('an empty file, or one of blank lines only, is invalid', async () => {
    for (const content of ['', '\n\n  \n']) {
      const { summary } = await validate(content);
      assert.equal(summary.total, 0);
      assert.deepEqual(
        summary.errors.map((error) => [error.code, error.line]),
        [['invalid_jsonl', null]],
      );
      assert.match(summary.errors[0]!.message, /no requests/);
    }
  });

  test('requests arrive in chunks of 500 while the file streams', async () => {
    const content = Array.from({ length: 1_203 }, (_, index) => line(`id-${index}`)).join('\n');
    const { summary, accepted } = await validate(content);
    assert.equal(summary.total, 1_203);
    assert.deepEqual(
      accepted.map((chunk) => chunk.length),
      [500, 500, 203],
    );
  });

  test('limits: too many requests, too long a line, and the error cap', async () => {
    const three = [line('a'), line('b'), line('c')].join('\n');
    const tooMany = await validate(three, { ...RULES, maxRequests: 2 });
    assert.match(tooMany.summary.errors[0]!.message, /more than 2 requests/);
    const long = await validate(`${line('a')}\n${line('b', { body: { text: 'x'.repeat(200) } })}`, { ...RULES, maxLineBytes: 150 });
    assert.deepEqual(
      long.summary.errors.map((error) => error.line),
      [2],
    );
    const capped = await validate(Array.from({ length: 50 }, () => 'bad').join('\n'), { ...RULES, maxErrors: 5 });
    assert.equal(capped.summary.errors.length, 5);
  });
});
