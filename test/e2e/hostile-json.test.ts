// Hostile JSON, end to end (real server, raw HTTP: the SDKs cannot even serialise these bodies): JSON
// nested 10,000 levels deep in a tool's `parameters`, in a `json_schema`, in an Anthropic tool's
// `input_schema` and in a batch line is a 400 naming the parameter (a line error for the batch, found
// at the first validation, never retried), instead of a stack overflow answered 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startBatchTestServer, type BatchTestServer } from '../batches/support/batch-test-server.ts';
import { until } from '../support/until.ts';

const LEVELS = 10_000;
/** A JSON Schema text nested LEVELS objects deep (`{"properties":{"p":{"properties":...}}}`), built as text. */
const DEEP_SCHEMA = `${'{"type":"object","properties":{"p":'.repeat(LEVELS)}{"type":"string"}${'}}'.repeat(LEVELS)}`;

describe('JSON nested deeper than 64 levels', () => {
  let server: BatchTestServer;

  before(async () => {
    server = await startBatchTestServer({ runtime: { batchWorker: { pollIntervalMs: 50 } } });
  });
  after(async () => {
    await server.close();
  });

  async function post(path: string, body: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  test('in chat tools[0].function.parameters: 400 invalid_parameter naming the parameter', async () => {
    const answer = await post(
      '/chat/completions',
      `{"model":"switchyard-echo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${DEEP_SCHEMA}}}]}`,
    );
    assert.equal(answer.status, 400, JSON.stringify(answer.body).slice(0, 300));
    assert.equal(answer.body.error.type, 'invalid_request_error');
    assert.equal(answer.body.error.code, 'invalid_parameter');
    assert.match(answer.body.error.param, /^tools\[0\]\.function\.parameters\./);
    assert.match(answer.body.error.message, /at most 64 levels/);
    assert.equal(answer.body.info_metadata.status, false);
  });

  test('in response_format.json_schema.schema: 400 naming the parameter', async () => {
    const answer = await post(
      '/chat/completions',
      `{"model":"switchyard-echo","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${DEEP_SCHEMA}}}}`,
    );
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'invalid_parameter');
    assert.match(answer.body.error.param, /^response_format\.json_schema\.schema\./);
  });

  test("in an Anthropic tool's input_schema: 400 in the Anthropic error shape", async () => {
    const answer = await post(
      '/messages',
      `{"model":"switchyard-echo","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${DEEP_SCHEMA}}]}`,
      { 'anthropic-version': '2023-06-01' },
    );
    assert.equal(answer.status, 400);
    assert.equal(answer.body.type, 'error');
    assert.equal(answer.body.error.type, 'invalid_request_error');
    assert.match(answer.body.error.message, /tools\[0\]\.input_schema/);
  });

  test('a schema nested within the limit is still served', async () => {
    const levels = 20; // 20 schema objects of two levels each, under the body's own three
    const schema = `${'{"type":"object","properties":{"p":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
    const answer = await post(
      '/chat/completions',
      `{"model":"switchyard-echo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`,
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
  });

  test('in a batch line: the batch fails validation with a line error naming body.tools[0]..., at its first attempt', async () => {
    const client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    const good = JSON.stringify({
      custom_id: 'good',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    const deep = `{"custom_id":"deep","method":"POST","url":"/v1/chat/completions","body":{"model":"switchyard-echo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${DEEP_SCHEMA}}}]}}`;
    const input = await client.files.create({ file: await toFile(Buffer.from(`${good}\n${deep}\n`), 'deep.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const failed = await until(async () => {
      const batch = await client.batches.retrieve(created.id);
      return batch.status === 'failed' ? batch : undefined;
    }, 'the batch to fail validation');
    const errors = failed.errors?.data ?? [];
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.code, 'invalid_jsonl');
    assert.equal(errors[0]?.line, 2);
    assert.match(errors[0]?.param ?? '', /^body\.tools\[0\]\.function\.parameters\./);
    assert.match(errors[0]?.message ?? '', /at most 64 levels/);
    const row = await server.runtime.database.db
      .selectFrom('batches')
      .select(['step_attempts'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.step_attempts), 0, 'validation was not retried');
  });
});
