// The foundation end to end: a real server, the official openai SDK, the CLI as a separate process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

async function getJson(server: TestServer, path: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${server.origin}${path}`, { method, headers });
  const text = await response.text();
  const body: any = text.startsWith('{') ? JSON.parse(text) : text;
  return { status: response.status, headers: response.headers, body };
}

function assertEnvelope(body: any, status: { type: string; code: string }): void {
  assert.deepEqual(Object.keys(body).sort(), ['error', 'info_metadata']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message', 'param', 'type']);
  assert.equal(body.error.type, status.type);
  assert.equal(body.error.code, status.code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.info_metadata.status, false);
  assert.equal(body.info_metadata.creator, 'switchyard');
  assert.match(body.info_metadata.request_id, /^req_/);
}

describe('foundation end to end', () => {
  let server: TestServer;
  let client: OpenAI;

  before(async () => {
    server = await startTestServer({
      config: {
        server: { bodyLimitBytes: 4096 },
        models: [
          {
            id: 'acme/echo-large',
            provider: 'builtin',
            upstreamModel: 'echo',
            aliases: ['echo-alias'],
            capabilities: ['chat'],
            description: 'slash id',
          },
        ],
      },
    });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
  });

  test('the openai SDK lists and retrieves models, ids with a slash and aliases included', async () => {
    const page = await client.models.list();
    const ids = page.data.map((model) => model.id);
    assert.ok(ids.includes('switchyard-echo'));
    assert.ok(ids.includes('acme/echo-large'));
    const listed = page.data.find((model) => model.id === 'acme/echo-large') as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(listed).sort(), [
      'capabilities',
      'created',
      'description',
      'id',
      'object',
      'owned_by',
      'parent',
      'permission',
      'pricing',
      'root',
    ]);
    assert.deepEqual(listed['permission'], []);
    assert.equal(listed['root'], 'acme/echo-large');
    assert.equal(listed['parent'], null);
    const retrieved = (await client.models.retrieve('acme/echo-large')) as unknown as Record<string, unknown>;
    assert.equal(retrieved['id'], 'acme/echo-large');
    assert.deepEqual(retrieved['capabilities'], ['chat']);
    assert.equal((await client.models.retrieve('echo-alias')).id, 'acme/echo-large');
    const raw = await getJson(server, '/v1/models/acme%2Fecho-large', { authorization: `Bearer ${server.key}` });
    assert.equal(raw.status, 200);
    assert.equal(raw.body['_metadata'].status, true);
  });

  test('an unknown model is 404 in the SPEC envelope, and the SDK raises NotFoundError', async () => {
    await assert.rejects(client.models.retrieve('no-such-model'), OpenAI.NotFoundError);
    const raw = await getJson(server, '/v1/models/no-such-model', { authorization: `Bearer ${server.key}` });
    assert.equal(raw.status, 404);
    assertEnvelope(raw.body, { type: 'invalid_request_error', code: 'model_not_found' });
    assert.equal(raw.body['error'].param, 'model');
  });

  test('every success carries _metadata and both request-id headers', async () => {
    const raw = await getJson(server, '/v1/models', { authorization: `Bearer ${server.key}` });
    const metadata = raw.body['_metadata'];
    assert.deepEqual(Object.keys(metadata).sort(), [
      'creator',
      'processing_time',
      'request_id',
      'status',
      'tier',
      'timestamp',
      'user_total_usage',
    ]);
    assert.equal(metadata.creator, 'switchyard');
    assert.equal(metadata.status, true);
    assert.equal(metadata.tier, 'Developer');
    assert.ok(!Number.isNaN(Date.parse(metadata.timestamp)));
    assert.equal(typeof metadata.processing_time, 'number');
    assert.deepEqual(Object.keys(metadata.user_total_usage).sort(), ['limit', 'remaining', 'reset_at', 'used']);
    assert.equal(raw.headers.get('x-request-id'), metadata.request_id);
    assert.equal(raw.headers.get('request-id'), metadata.request_id);
  });

  test('auth errors: missing, invalid, malformed scheme; Bearer and x-api-key both accepted', async () => {
    const missing = await getJson(server, '/v1/models');
    assert.equal(missing.status, 401);
    assertEnvelope(missing.body, { type: 'auth_error', code: 'missing_api_key' });
    const invalid = await getJson(server, '/v1/models', { authorization: 'Bearer sk-sy-not-a-key' });
    assert.equal(invalid.status, 401);
    assertEnvelope(invalid.body, { type: 'auth_error', code: 'invalid_api_key' });
    const basic = await getJson(server, '/v1/models', { authorization: 'Basic abc' });
    assertEnvelope(basic.body, { type: 'auth_error', code: 'missing_api_key' });
    assert.equal((await getJson(server, '/v1/models', { 'x-api-key': server.key })).status, 200);
    assert.equal((await getJson(server, '/v1/models', { authorization: `bearer ${server.key}` })).status, 200);
    await assert.rejects(
      new OpenAI({ apiKey: 'sk-wrong', baseURL: server.baseUrl, maxRetries: 0 }).models.list(),
      OpenAI.AuthenticationError,
    );
  });

  test('an expired key is token_expired; a key without the permission is 403', async () => {
    const expiring = await server.createKey({ expiresInMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const expired = await getJson(server, '/v1/models', { authorization: `Bearer ${expiring.key}` });
    assert.equal(expired.status, 401);
    assertEnvelope(expired.body, { type: 'auth_error', code: 'token_expired' });
    const limited = await server.createKey({ permissions: ['embeddings'] });
    const denied = await getJson(server, '/v1/models', { authorization: `Bearer ${limited.key}` });
    assert.equal(denied.status, 403);
    assertEnvelope(denied.body, { type: 'permission_error', code: 'permission_denied' });
    assert.match(denied.body['error'].message, /'models' permission/);
    await assert.rejects(
      new OpenAI({ apiKey: limited.key, baseURL: server.baseUrl, maxRetries: 0 }).models.list(),
      OpenAI.PermissionDeniedError,
    );
    // Key status needs no particular permission.
    assert.equal((await getJson(server, '/v1/auth/key', { authorization: `Bearer ${limited.key}` })).status, 200);
  });

  test('key status: the SPEC authorization object, field by field', async () => {
    const { status, body } = await getJson(server, '/v1/auth/key', { 'x-api-key': server.key });
    assert.equal(status, 200);
    // The SPEC's fields, plus `budgets` (issue 37: spend, remaining and reset of the money budgets that
    // apply; an empty list when none does).
    assert.deepEqual(body.budgets, []);
    assert.deepEqual(Object.keys(body).sort(), [
      '_metadata',
      'authorized',
      'budgets',
      'created',
      'expires',
      'id',
      'object',
      'organization',
      'permissions',
      'tier',
      'usage_info',
    ]);
    assert.equal(body['object'], 'authorization');
    assert.match(body['id'], /^auth-[0-9a-f]{16}$/);
    assert.equal(body['authorized'], true);
    assert.equal(body['tier'], 'Developer');
    assert.deepEqual(body['permissions'], [
      'chat.completions',
      'messages',
      'responses',
      'embeddings',
      'moderations',
      'images',
      'files',
      'batches',
      'models',
    ]);
    assert.equal(body['organization'], 'org-switchyard-ai');
    assert.ok(Number.isInteger(body['created']) && Math.abs(body['created'] - Date.now() / 1000) < 60);
    assert.equal(body['expires'], null);
    const now = new Date();
    const nextMidnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    assert.deepEqual(body['usage_info'].daily, { used: 0, limit: 2_000_000, remaining: 2_000_000, reset_at: nextMidnight });
    assert.deepEqual(body['usage_info'].monthly, { used: 0, limit: 20_000_000, remaining: 20_000_000, reset_at: nextMonth });
    assert.ok(Number.isInteger(body['_metadata'].processing_time));
    assert.equal(body['_metadata'].creator, 'switchyard');
    assert.equal(body['_metadata'].status, true);
  });

  test('unknown routes are 404 and wrong methods 405, both in the SPEC envelope', async () => {
    const unknown = await getJson(server, '/v1/nothing-here', { authorization: `Bearer ${server.key}` });
    assert.equal(unknown.status, 404);
    assertEnvelope(unknown.body, { type: 'invalid_request_error', code: 'not_found' });
    const wrongMethod = await getJson(server, '/v1/models', { authorization: `Bearer ${server.key}` }, 'DELETE');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'GET');
    assertEnvelope(wrongMethod.body, { type: 'invalid_request_error', code: 'method_not_allowed' });
  });

  test('malformed requests: bad JSON, wrong content type, oversized and non-object bodies are SPEC errors, never 500', async () => {
    const post = async (body: string, contentType: string | undefined) => {
      const headers: Record<string, string> = { authorization: `Bearer ${server.key}` };
      if (contentType !== undefined) headers['content-type'] = contentType;
      const response = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers, body });
      return { status: response.status, body: (await response.json()) as any };
    };
    const cases: Array<[string, string, string | undefined, number, string]> = [
      ['malformed JSON', '{"model": "switchyard-echo", "messages": [', 'application/json', 400, 'invalid_format'],
      ['wrong content type', 'model=switchyard-echo', 'text/plain', 400, 'invalid_format'],
      ['no content type', '{"model":"switchyard-echo"}', undefined, 400, 'invalid_format'],
      ['empty JSON body', '', 'application/json', 400, 'invalid_format'],
      ['a JSON array', '[1, 2]', 'application/json', 400, 'invalid_format'],
      ['a missing field', '{"messages":[{"role":"user","content":"hi"}]}', 'application/json', 400, 'missing_parameter'],
      [
        'an oversized body',
        JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'x'.repeat(10_000) }] }),
        'application/json',
        413,
        'request_too_large',
      ],
    ];
    for (const [name, body, contentType, status, code] of cases) {
      const answer = await post(body, contentType);
      assert.equal(answer.status, status, name);
      assertEnvelope(answer.body, { type: 'invalid_request_error', code });
    }
  });

  test('a streamed answer is counted once in the metrics, when it ends', async () => {
    const stream = await client.chat.completions.create({
      model: 'switchyard-echo',
      stream: true,
      messages: [{ role: 'user', content: 'count me once' }],
    });
    for await (const _chunk of stream) void _chunk;
    const metrics = (await getJson(server, '/metrics')).body as string;
    assert.match(metrics, /switchyard_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} 1\n/);
  });

  test('CORS preflight for SDK headers is answered', async () => {
    const response = await fetch(`${server.origin}/v1/models`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://example.test',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, x-stainless-os',
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /x-stainless-os/);
  });

  test('operations: healthz, readyz, metrics and the OpenAPI description', async () => {
    assert.deepEqual((await getJson(server, '/healthz')).body, { status: 'ok' });
    const ready = await getJson(server, '/readyz');
    assert.equal(ready.status, 200);
    const metrics = await getJson(server, '/metrics');
    assert.match(metrics.body as string, /switchyard_http_requests_total\{method="GET",route="\/v1\/models",status="200"\}/);
    assert.match(metrics.body as string, /switchyard_http_request_duration_seconds_bucket/);
    const openapi = await getJson(server, '/v1/openapi.json');
    assert.equal(openapi.body['openapi'], '3.1.0');
    assert.equal(openapi.body['info'].version, '1.0.0');
    assert.ok(openapi.body['paths']['/v1/models'].get);
    assert.ok(openapi.body['paths']['/v1/models/{model}'].get);
    assert.ok(openapi.body['paths']['/v1/auth/key'].get);
  });

  test('the CLI creates a key that works over HTTP at once, and a revocation stops it within a second', async () => {
    const env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    const created = await runCli(
      [
        'keys',
        'create',
        '--org',
        'org-cli',
        '--create-org',
        '--tier',
        'Production',
        '--permissions',
        'models,embeddings',
        '--expires-in',
        '30d',
        '--json',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const output = JSON.parse(created.stdout) as { id: string; key: string; organization: string; tier: string; permissions: string[] };
    assert.match(output.key, /^sk-sy-[A-Za-z0-9]{43}$/);
    assert.equal(output.organization, 'org-cli');
    assert.equal(output.tier, 'Production');
    assert.deepEqual(output.permissions, ['models', 'embeddings']);
    const status = await getJson(server, '/v1/auth/key', { authorization: `Bearer ${output.key}` });
    assert.equal(status.body['organization'], 'org-cli');
    assert.ok(Number.isInteger(status.body['expires']));

    const listed = await runCli(['keys', 'list', '--org', 'org-cli'], env);
    assert.match(listed.stdout, new RegExp(`${output.id} .*org-cli .*Production .*active`));
    assert.doesNotMatch(listed.stdout, new RegExp(output.key));

    const revoked = await runCli(['keys', 'revoke', output.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    // The server polls the key version every 500 ms; wait for the change to be seen (bounded loop).
    let finalStatus = 0;
    for (let attempt = 0; attempt < 40; attempt++) {
      finalStatus = (await getJson(server, '/v1/models', { authorization: `Bearer ${output.key}` })).status;
      if (finalStatus === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(finalStatus, 401);
    const again = await runCli(['keys', 'revoke', output.id], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No active key/);
  });

  test('CLI usage errors are clear and exit 1', async () => {
    const env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    const badTier = await runCli(['keys', 'create', '--tier', 'Gold'], env);
    assert.equal(badTier.code, 1);
    assert.match(badTier.stderr, /Unknown tier "Gold"/);
    const badPermission = await runCli(['keys', 'create', '--permissions', 'models,teleport'], env);
    assert.match(badPermission.stderr, /Unknown permission\(s\): teleport/);
    const badDuration = await runCli(['keys', 'create', '--expires-in', 'soon'], env);
    assert.match(badDuration.stderr, /not a duration/);
    const badConfig = await runCli(['migrate'], { ...env, PORT: 'x' });
    assert.match(badConfig.stderr, /PORT=x is not an integer/);
  });
});
