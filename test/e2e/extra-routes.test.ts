// Routes an embedder adds (BuildAppOptions.extraRoutes) sit behind the same edge as Switchyard's own:
// a key with the route's permission is required, answers carry `_metadata` and the request id, and
// errors come in the SPEC envelope. bench/gateway-in-process.ts measures the edge alone this way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('extra routes behind the edge', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      extraRoutes: (app, tools) => {
        app.post(
          '/custom/echo',
          { config: { switchyard: { permission: 'chat.completions', limits: 'request' } } },
          async (request, reply) =>
            reply.sendAnswer(
              await tools.answerRequest(request, async () => ({ object: 'echo', body: request.body as Record<string, unknown> })),
            ),
        );
        app.post('/custom/plain', { config: { switchyard: { permission: 'chat.completions', limits: 'none' } } }, async (_request, reply) =>
          reply.sendData({ object: 'plain' }),
        );
      },
    });
  });
  after(async () => server.close());

  const post = (headers: Record<string, string>) =>
    fetch(`${server.origin}/custom/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ hello: 'world' }),
    });

  test('a keyed call gets the answer with _metadata and the request id', async () => {
    const response = await post({ authorization: `Bearer ${server.key}` });
    assert.equal(response.status, 200);
    const body = (await response.json()) as Record<string, any>;
    assert.deepEqual(body['body'], { hello: 'world' });
    assert.equal(body['_metadata'].status, true);
    assert.equal(body['_metadata'].request_id, response.headers.get('x-request-id'));
    assert.equal(body['_metadata'].tier, 'Developer');
    // tools.answerRequest admitted one request against the key's per-minute limit.
    assert.notEqual(response.headers.get('x-ratelimit-remaining-requests'), null);
  });

  test('reply.sendData answers a body with _metadata and no admission', async () => {
    const response = await fetch(`${server.origin}/custom/plain`, { method: 'POST', headers: { authorization: `Bearer ${server.key}` } });
    assert.equal(response.status, 200);
    const body = (await response.json()) as Record<string, any>;
    assert.equal(body['object'], 'plain');
    assert.equal(body['_metadata'].status, true);
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), null);
  });

  test('without a key: 401 in the SPEC envelope', async () => {
    const response = await post({});
    assert.equal(response.status, 401);
    const body = (await response.json()) as Record<string, any>;
    assert.equal(body['error'].code, 'missing_api_key');
    assert.equal(body['info_metadata'].status, false);
  });

  test('a key without the permission: 403', async () => {
    const { key } = await server.createKey({ permissions: ['models'] });
    const response = await post({ authorization: `Bearer ${key}` });
    assert.equal(response.status, 403);
    const body = (await response.json()) as Record<string, any>;
    assert.equal(body['error'].type, 'permission_error');
  });
});

describe('route schemas', () => {
  // Validation lives in the format decoders (with the SPEC's `param`s); Fastify's Ajv and
  // fast-json-stringify compilers are not loaded at start (src/app.ts), so a route that brings a schema
  // must fail loudly at start rather than go unvalidated.
  test('an extra route with a body schema stops the start with a message that says where validation goes', async () => {
    await assert.rejects(
      startTestServer({
        extraRoutes: (app) => {
          app.post('/custom/schema', { schema: { body: { type: 'object' } } }, async () => ({}));
        },
      }),
      /Fastify route schemas are not compiled here: validate in the format decoder/,
    );
  });
});
