// The schemas /v1/openapi.json publishes (src/routes/openapi-schemas.ts, a third description of each wire
// shape beside the decoders and the encoders) checked against the server's own answers: each request
// below is valid for its operation's request schema, and each answer, success or error, conforms to the
// schema the document gives it. A renamed or missing field in an encoder, or a schema that drifts from
// what the encoders send, fails here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkAgainst, type VendoredSchemas } from '../support/openapi-schema-check.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

interface OpenApiOperation {
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

describe('/v1/openapi.json against the answers the server gives', () => {
  let server: TestServer;
  let document: OpenApiDocument;
  let schemas: VendoredSchemas;

  before(async () => {
    server = await startTestServer();
    document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as OpenApiDocument;
    schemas = {
      source: { file: '/v1/openapi.json', title: null, version: null, sha256: '' },
      schemas: { ...document.components.schemas },
    };
  });
  after(async () => {
    await server.close();
  });

  function operation(key: string): OpenApiOperation {
    const [method, path] = key.split(' ') as [string, string];
    const found = document.paths[path]?.[method.toLowerCase()];
    assert.ok(found !== undefined, `${key} is not in the document`);
    return found;
  }

  /** Failures of `value` against an inline schema of the document (its $refs resolved by the checker). */
  function failures(name: string, schema: Record<string, unknown>, value: unknown): string[] {
    schemas.schemas[name] = schema;
    return checkAgainst(schemas, name, value);
  }

  async function call(key: string, body?: unknown, path?: string): Promise<{ status: number; json: unknown }> {
    const [method, documented] = key.split(' ') as [string, string];
    const response = await fetch(`${server.origin}${path ?? documented}`, {
      method,
      headers: { authorization: `Bearer ${server.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: await response.json() };
  }

  const successes: Array<{ key: string; body?: Record<string, unknown>; path?: string }> = [
    {
      key: 'POST /v1/chat/completions',
      body: { model: 'switchyard-echo', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 20 },
    },
    { key: 'POST /v1/messages', body: { model: 'switchyard-echo', max_tokens: 20, messages: [{ role: 'user', content: 'hello there' }] } },
    { key: 'POST /v1/messages/count_tokens', body: { model: 'switchyard-echo', messages: [{ role: 'user', content: 'hello there' }] } },
    { key: 'POST /v1/responses', body: { model: 'switchyard-echo', input: 'hello there', max_output_tokens: 20 } },
    { key: 'POST /v1/embeddings', body: { model: 'switchyard-embeddings', input: ['hello there', 'general kenobi'] } },
    { key: 'POST /v1/moderations', body: { input: 'a quiet afternoon in the garden' } },
    { key: 'POST /v1/images/generations', body: { model: 'switchyard-images', prompt: 'a calm ocean', size: '256x256' } },
    { key: 'GET /v1/models' },
    { key: 'GET /v1/models/{model}', path: '/v1/models/switchyard-echo' },
    { key: 'GET /v1/auth/key' },
    { key: 'GET /v1/files' },
    { key: 'GET /v1/batches' },
  ];

  for (const { key, body, path } of successes) {
    test(`${key}: the request fits the published request schema and the answer its 200 schema`, async () => {
      const documented = operation(key);
      if (body !== undefined) {
        const requestSchema = documented.requestBody?.content['application/json']?.schema;
        assert.ok(requestSchema !== undefined, `${key}: no JSON request schema`);
        assert.deepEqual(failures(`${key} request`, requestSchema, body), [], `${key}: the test's own request does not fit`);
      }
      const { status, json } = await call(key, body, path);
      assert.equal(status, 200, JSON.stringify(json));
      const responseSchema = documented.responses['200']?.content?.['application/json']?.schema;
      assert.ok(responseSchema !== undefined, `${key}: no JSON 200 schema`);
      assert.deepEqual(failures(`${key} 200`, responseSchema, json), []);
    });
  }

  test('an error answer fits the published error schema, with the field named in `param`', async () => {
    const key = 'POST /v1/chat/completions';
    const { status, json } = await call(key, { model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }], temperature: 9 });
    assert.equal(status, 400);
    const errorSchema = operation(key).responses['default']?.content?.['application/json']?.schema;
    assert.ok(errorSchema !== undefined);
    assert.deepEqual(failures(`${key} error`, errorSchema, json), []);
    assert.equal((json as { error: { param: string } }).error.param, 'temperature');
  });
});
