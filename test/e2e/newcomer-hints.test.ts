// The mistakes a newcomer makes first, each answered with what to change, in the SPEC envelope (and in
// the Anthropic body where the Anthropic SDK is the client): `/v1` missing or doubled in the base URL,
// the key without `Bearer`, `GET /`, a mistyped model, and the CLI's `--org` typos.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('newcomer hints', () => {
  let server: TestServer;

  const raw = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${server.origin}${path}`, { redirect: 'manual', ...init });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : (JSON.parse(text) as any) };
  };

  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('an OpenAI base URL without /v1: 404 naming the path it meant', async () => {
    const client = new OpenAI({ apiKey: server.key, baseURL: server.origin, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.NotFoundError);
        assert.match(error.message, /Did you mean POST \/v1\/chat\/completions\? The base URL probably lacks \/v1/);
        return true;
      },
    );
    const answer = await raw('/models', { headers: { authorization: `Bearer ${server.key}` } });
    assert.equal(answer.status, 404);
    assert.equal(answer.body.error.type, 'invalid_request_error');
    assert.equal(answer.body.error.code, 'not_found');
    assert.match(answer.body.error.message, /Did you mean GET \/v1\/models\?/);
    assert.equal(answer.body.info_metadata.status, false);
  });

  test('an Anthropic base URL with /v1 (so /v1/v1/messages): an Anthropic not_found_error naming /v1/messages', async () => {
    const client = new Anthropic({ apiKey: server.key, baseURL: `${server.origin}/v1`, maxRetries: 0 });
    await assert.rejects(
      client.messages.create({ model: 'switchyard-echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof Anthropic.NotFoundError);
        assert.match(error.message, /Did you mean POST \/v1\/messages\? The path has \/v1 twice.*without \/v1/);
        return true;
      },
    );
    const answer = await raw('/v1/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(answer.status, 404);
    assert.equal(answer.body.type, 'error');
    assert.equal(answer.body.error.type, 'not_found_error');
    assert.equal(answer.body.request_id, answer.headers.get('request-id'));
    // A path near nothing keeps the plain answer.
    const nowhere = await raw('/v1/nowhere');
    assert.equal(nowhere.status, 404);
    assert.doesNotMatch(nowhere.body.error.message, /Did you mean/);
  });

  test('the key without "Bearer" (or under another scheme) is told so; a bare "Bearer" is a missing key', async () => {
    const bare = await raw('/v1/models', { headers: { authorization: server.key } });
    assert.equal(bare.status, 401);
    assert.equal(bare.body.error.type, 'auth_error');
    assert.equal(bare.body.error.code, 'missing_api_key');
    assert.match(bare.body.error.message, /carries the key alone, without a scheme\. Send the key as "Authorization: Bearer <API_KEY>"/);
    assert.equal(bare.body.error.message.includes(server.key), false, 'the key is not echoed');
    const basic = await raw('/v1/models', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    assert.equal(basic.status, 401);
    assert.match(basic.body.error.message, /the scheme "Basic"/);
    const empty = await raw('/v1/models', { headers: { authorization: 'Bearer' } });
    assert.equal(empty.status, 401);
    assert.match(empty.body.error.message, /^No API key provided/);
    // x-api-key still works beside a header without Bearer.
    assert.equal((await raw('/v1/models', { headers: { authorization: 'whatever', 'x-api-key': server.key } })).status, 200);
  });

  test('GET / sends a browser to /dashboard and tells any other client where things are', async () => {
    const browser = await raw('/', { headers: { accept: 'text/html,application/xhtml+xml' } });
    assert.equal(browser.status, 302);
    assert.equal(browser.headers.get('location'), '/dashboard');
    const client = await raw('/');
    assert.equal(client.status, 200);
    assert.equal(client.body.openai_base_url, `${server.origin}/v1`);
    assert.equal(client.body.anthropic_base_url, server.origin);
    assert.equal(client.body.dashboard, `${server.origin}/dashboard`);
    assert.match(client.body.message, /base URL/);
  });

  test('a mistyped model gets the closest catalogue name; a far one gets none', async () => {
    const client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: 'switchyard-ecko', messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.NotFoundError);
        assert.equal(error.code, 'model_not_found');
        assert.equal(error.param, 'model');
        assert.match(error.message, /Did you mean 'switchyard-echo'\?/);
        return true;
      },
    );
    await assert.rejects(client.models.retrieve('Switchyard-Embedings'), /Did you mean 'switchyard-embeddings'\?/);
    await assert.rejects(
      client.chat.completions.create({ model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.NotFoundError);
        assert.doesNotMatch(error.message, /Did you mean/);
        return true;
      },
    );
  });

  test('CLI: keys create --org with an unknown organization refuses (closest name given) unless --create-org; usage --org unknown says so', async () => {
    const env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    const typo = await runCli(['keys', 'create', '--org', 'org-swichyard-ai', '--json'], env);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /Organization 'org-swichyard-ai' does not exist\. Did you mean 'org-switchyard-ai'\? Add --create-org/);
    assert.doesNotMatch((await runCli(['keys', 'list'], env)).stdout, /org-swichyard-ai/);

    const known = await runCli(['keys', 'create', '--org', 'org-switchyard-ai', '--json'], env);
    assert.equal(known.code, 0, known.stderr);
    const created = await runCli(['keys', 'create', '--org', 'org-brand-new', '--create-org', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal((JSON.parse(created.stdout) as { organization: string }).organization, 'org-brand-new');

    const unknownUsage = await runCli(['usage', '--org', 'org-nonexistent'], env);
    assert.equal(unknownUsage.code, 1);
    assert.match(unknownUsage.stderr, /Organization 'org-nonexistent' does not exist\./);
    const usage = await runCli(['usage', '--org', 'org-brand-new', '--json'], env);
    assert.equal(usage.code, 0, usage.stderr);
    assert.deepEqual((JSON.parse(usage.stdout) as { models: unknown[] }).models, []);
  });
});
