// The response cache end to end: a real server, the official SDKs, mock upstreams. For each generation
// format, a live answer (JSON or streamed) is replayed from the cache to the SDK, streamed and not, with
// the same text, tool calls, finish reason and usage, and no second upstream call; interrupted or
// failed streams are never replayed; the headers, `_metadata.cache`, the directives and the ledger.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';

const VIA_OPENAI = 'mock-openai-model';
const VIA_ANTHROPIC = 'mock-anthropic-model';
const CAPABILITIES = ['chat', 'function_calling', 'streaming'] as const;
const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather.', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('response cache end to end', () => {
  let server: TestServer;
  let openaiUpstream: MockOpenAIServer;
  let anthropicUpstream: MockAnthropicServer;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let otherKey: string;
  let otherOrganizationKey: string;
  let prompt = 0;
  /** A prompt no earlier test used (every test starts from an empty cache entry). */
  const fresh = (text: string) => `${text} #${++prompt}`;

  async function rawPost(path: string, body: unknown, headers: Record<string, string> = {}, key = server.key) {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  before(async () => {
    openaiUpstream = await new MockOpenAIServer().start();
    anthropicUpstream = await new MockAnthropicServer().start();
    const defaultOrganization = 'org-switchyard-ai';
    server = await startTestServer({
      config: {
        providers: {
          'mock-openai': { kind: 'openai-compatible', baseUrl: openaiUpstream.baseUrl, apiKey: 'sk-up', maxRetries: 0 },
          'mock-anthropic': { kind: 'anthropic', baseUrl: anthropicUpstream.baseUrl, apiKey: 'sk-ant-up', maxRetries: 0 },
        },
        models: [
          { id: VIA_OPENAI, provider: 'mock-openai', upstreamModel: 'gpt-mock', capabilities: [...CAPABILITIES] },
          { id: VIA_ANTHROPIC, provider: 'mock-anthropic', upstreamModel: 'claude-mock', capabilities: [...CAPABILITIES] },
        ],
        responseCache: { organizations: { [defaultOrganization]: { enabled: true }, 'org-other': { enabled: true } } },
      },
    });
    openai = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: server.key, baseURL: server.origin, maxRetries: 0 });
    otherKey = (await server.createKey()).key;
    otherOrganizationKey = (await server.createKey({ organization: 'org-other' })).key;
  });

  after(async () => {
    await server?.close();
    await openaiUpstream?.close();
    await anthropicUpstream?.close();
  });

  beforeEach(() => {
    openaiUpstream.reset();
    anthropicUpstream.reset();
  });

  describe('chat completions (openai SDK)', () => {
    const toolReply = {
      text: 'Let me check.',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }],
      usage: { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 },
    };

    test('a JSON answer is replayed to a streamed request and to a JSON one, with the same text, tool calls, finish reason and usage', async () => {
      const request = {
        model: VIA_OPENAI,
        temperature: 0,
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user' as const, content: fresh('Weather in Oslo?') }],
      };
      openaiUpstream.enqueue({ type: 'reply', reply: toolReply });
      const { data: live, response } = await openai.chat.completions.create(request).withResponse();
      assert.equal(response.headers.get('cache-status')?.startsWith('switchyard; fwd=miss'), true);
      const cacheKey = response.headers.get('x-switchyard-cache-key');
      assert.match(cacheKey ?? '', /^[0-9a-f]{64}$/);
      assert.equal((live as unknown as { _metadata: { cache: string } })._metadata.cache, 'miss');

      const { data: again, response: againResponse } = await openai.chat.completions.create(request).withResponse();
      assert.match(againResponse.headers.get('cache-status') ?? '', /^switchyard; hit; ttl=\d+/);
      assert.equal(againResponse.headers.get('x-switchyard-cache-key'), cacheKey);
      assert.equal((again as unknown as { _metadata: { cache: string } })._metadata.cache, 'hit');
      assert.notEqual(again.id, live.id);
      assert.equal(again.choices[0]!.message.content, live.choices[0]!.message.content);
      assert.equal(again.choices[0]!.finish_reason, 'tool_calls');
      assert.deepEqual(
        again.choices[0]!.message.tool_calls!.map((call) => call.type === 'function' && [call.function.name, call.function.arguments]),
        live.choices[0]!.message.tool_calls!.map((call) => call.type === 'function' && [call.function.name, call.function.arguments]),
      );
      assert.notEqual(again.choices[0]!.message.tool_calls![0]!.id, live.choices[0]!.message.tool_calls![0]!.id);
      assert.deepEqual(again.usage, live.usage);

      const stream = openai.chat.completions.stream({ ...request, stream_options: { include_usage: true } });
      const streamed = await stream.finalChatCompletion();
      assert.equal(streamed.choices[0]!.message.content, live.choices[0]!.message.content);
      assert.equal(streamed.choices[0]!.finish_reason, 'tool_calls');
      const streamedCall = streamed.choices[0]!.message.tool_calls![0]!;
      assert.equal(streamedCall.type === 'function' && streamedCall.function.arguments, '{"city":"Oslo"}');
      assert.equal(streamed.usage?.total_tokens, live.usage?.total_tokens);
      assert.equal(openaiUpstream.requests.length, 1, 'one upstream call for three answers');
    });

    test('a streamed answer is replayed as a stream of the same chunks (fresh id, usage chunk, [DONE]) and as JSON', async () => {
      const request = { model: VIA_OPENAI, temperature: 0, messages: [{ role: 'user' as const, content: fresh('Tell me a story') }] };
      openaiUpstream.enqueue({ type: 'reply', reply: { text: 'Once upon a time there was a cache.' } });
      const body = { ...request, stream: true, stream_options: { include_usage: true } };
      const live = await rawPost('/chat/completions', body);
      const replay = await rawPost('/chat/completions', body);
      assert.match(replay.headers.get('cache-status') ?? '', /hit/);
      const chunks = (text: string) =>
        text
          .split('\n\n')
          .filter((block) => block.startsWith('data: '))
          .map((block) => block.slice(6));
      const liveChunks = chunks(live.text);
      const replayChunks = chunks(replay.text);
      assert.equal(replayChunks.at(-1), '[DONE]');
      const shape = (data: string) => {
        if (data === '[DONE]') return data;
        const chunk = JSON.parse(data) as { id: string; choices: Array<{ delta: unknown; finish_reason: unknown }>; usage: unknown };
        return JSON.stringify({ choices: chunk.choices.map((choice) => [choice.delta, choice.finish_reason]), usage: chunk.usage });
      };
      assert.deepEqual(replayChunks.map(shape).join(''), liveChunks.map(shape).join(''), 'same deltas, finish reason and usage');
      const liveId = (JSON.parse(liveChunks[0]!) as { id: string }).id;
      const replayId = (JSON.parse(replayChunks[0]!) as { id: string }).id;
      assert.notEqual(replayId, liveId);
      const json = await openai.chat.completions.create(request);
      assert.equal(json.choices[0]!.message.content, 'Once upon a time there was a cache.');
      assert.equal(openaiUpstream.requests.length, 1);
    });

    test('an interrupted stream and a failed one are never stored', async () => {
      const request = { model: VIA_OPENAI, temperature: 0, stream: true, messages: [{ role: 'user', content: fresh('Cut me off') }] };
      openaiUpstream.enqueue({ type: 'reply', reply: { text: 'one two three four five' }, interrupt: { afterEvents: 3, how: 'reset' } });
      const cut = await rawPost('/chat/completions', request);
      assert.doesNotMatch(cut.text, /\[DONE\]/);
      openaiUpstream.enqueue({ type: 'error', status: 500, message: 'upstream down' });
      const failed = await rawPost('/chat/completions', request);
      assert.equal(failed.status, 500);
      const third = await rawPost('/chat/completions', request);
      assert.match(third.headers.get('cache-status') ?? '', /fwd=miss/);
      assert.match(third.text, /\[DONE\]/);
      assert.equal(openaiUpstream.requests.length, 3, 'neither the cut nor the failed answer was replayed');
      await until(
        async () => (/hit/.test((await rawPost('/chat/completions', request)).headers.get('cache-status') ?? '') ? true : undefined),
        'the completed stream stored',
      );
    });
  });

  describe('messages (anthropic SDK)', () => {
    test('JSON and streamed answers replay each other with the same content, stop reason and usage', async () => {
      const request = {
        model: VIA_ANTHROPIC,
        max_tokens: 100,
        temperature: 0,
        tools: [
          {
            name: 'get_weather',
            description: 'Weather.',
            input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
          },
        ],
        messages: [{ role: 'user' as const, content: fresh('Weather in Bergen?') }],
      };
      anthropicUpstream.enqueue({
        type: 'reply',
        reply: {
          text: 'Checking.',
          toolUses: [{ name: 'get_weather', input: { city: 'Bergen' } }],
          usage: { input_tokens: 30, output_tokens: 12 },
        },
      });
      const live = await anthropic.messages.stream(request).finalMessage();
      const json = await anthropic.messages.create(request);
      const streamed = await anthropic.messages.stream(request).finalMessage();
      for (const replay of [json, streamed]) {
        assert.notEqual(replay.id, live.id);
        assert.equal(replay.stop_reason, 'tool_use');
        assert.deepEqual(
          replay.content.map((block) =>
            block.type === 'tool_use'
              ? [block.type, block.name, block.input]
              : block.type === 'text'
                ? [block.type, block.text]
                : [block.type],
          ),
          live.content.map((block) =>
            block.type === 'tool_use'
              ? [block.type, block.name, block.input]
              : block.type === 'text'
                ? [block.type, block.text]
                : [block.type],
          ),
        );
        assert.equal(replay.usage.input_tokens, live.usage.input_tokens);
        assert.equal(replay.usage.output_tokens, live.usage.output_tokens);
      }
      assert.equal(anthropicUpstream.requests.length, 1);
    });

    test('a stream that ended in an error event is not replayed', async () => {
      const request = {
        model: VIA_ANTHROPIC,
        max_tokens: 50,
        temperature: 0,
        messages: [{ role: 'user' as const, content: fresh('Fail midway') }],
      };
      anthropicUpstream.enqueue({
        type: 'reply',
        reply: { text: 'partial answer', errorEvent: { type: 'overloaded_error', message: 'Overloaded' } },
      });
      await assert.rejects(anthropic.messages.stream(request).finalMessage());
      const next = await anthropic.messages.create(request);
      assert.equal(next.stop_reason, 'end_turn');
      assert.equal(anthropicUpstream.requests.length, 2);
    });
  });

  describe('responses (openai SDK)', () => {
    test('JSON and streamed answers replay each other (response.completed, same output and usage)', async () => {
      const request = {
        model: VIA_OPENAI,
        temperature: 0,
        max_output_tokens: 100,
        input: fresh('Say hi'),
        tools: [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }],
      };
      openaiUpstream.enqueue({ type: 'reply', reply: { text: 'Hi!', toolCalls: [{ name: 'get_weather', arguments: {} }] } });
      const stream = openai.responses.stream(request);
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      const live = await stream.finalResponse();
      const json = await openai.responses.create(request);
      const replayStream = openai.responses.stream(request);
      const replayTypes: string[] = [];
      for await (const event of replayStream) replayTypes.push(event.type);
      const streamed = await replayStream.finalResponse();
      assert.deepEqual(replayTypes, types, 'same event types in the same order');
      assert.equal(replayTypes.at(-1), 'response.completed');
      for (const replay of [json, streamed]) {
        assert.notEqual(replay.id, live.id);
        assert.equal(replay.output_text, live.output_text);
        assert.deepEqual(
          replay.output.map((item) => (item.type === 'function_call' ? [item.type, item.name, item.arguments] : [item.type])),
          live.output.map((item) => (item.type === 'function_call' ? [item.type, item.name, item.arguments] : [item.type])),
        );
        assert.deepEqual(replay.usage, live.usage);
        assert.equal(replay.status, live.status);
      }
      assert.equal(openaiUpstream.requests.length, 1);
    });

    test('a request continuing a stored response is never answered from the cache', async () => {
      const first = await openai.responses.create({
        model: VIA_OPENAI,
        temperature: 0,
        max_output_tokens: 100,
        input: fresh('Remember 7'),
        store: true,
      });
      const body = { model: VIA_OPENAI, temperature: 0, max_output_tokens: 100, input: 'What number?', previous_response_id: first.id };
      const one = await rawPost('/responses', body);
      const two = await rawPost('/responses', body);
      assert.equal(one.status, 200);
      assert.match(two.headers.get('cache-status') ?? '', /fwd=bypass; detail=stateful/);
      assert.equal(openaiUpstream.requests.length, 3);
    });
  });

  describe('embeddings (openai SDK)', () => {
    test('a repeated embeddings request is answered from the cache with the same vectors and usage', async () => {
      const request = { model: 'switchyard-embeddings', input: [fresh('cache me'), 'and me'], encoding_format: 'float' as const };
      const { data: live, response } = await openai.embeddings.create(request).withResponse();
      assert.match(response.headers.get('cache-status') ?? '', /fwd=miss/);
      const { data: again, response: againResponse } = await until(async () => {
        const attempt = await openai.embeddings.create(request).withResponse();
        return /hit/.test(attempt.response.headers.get('cache-status') ?? '') ? attempt : undefined;
      }, 'the embeddings answer stored');
      assert.equal(againResponse.headers.get('x-switchyard-cache-key'), response.headers.get('x-switchyard-cache-key'));
      assert.deepEqual(
        again.data.map((item) => item.embedding),
        live.data.map((item) => item.embedding),
      );
      assert.deepEqual(again.usage, live.usage);
      assert.equal((again as unknown as { _metadata: { cache: string } })._metadata.cache, 'hit');
      // Another input misses.
      const other = await openai.embeddings.create({ ...request, input: [fresh('other')] }).withResponse();
      assert.match(other.response.headers.get('cache-status') ?? '', /fwd=miss/);
    });
  });

  describe('scope, directives and accounting', () => {
    const body = () => ({ model: VIA_OPENAI, temperature: 0, messages: [{ role: 'user', content: fresh('Scoped') }] });

    test('another key and another organization miss; reordered keys and other extras fields hit or miss exactly', async () => {
      const request = body();
      await rawPost('/chat/completions', request);
      const reordered = Object.fromEntries(Object.entries(request).reverse());
      assert.match((await rawPost('/chat/completions', reordered)).headers.get('cache-status') ?? '', /hit/);
      assert.match((await rawPost('/chat/completions', request, {}, otherKey)).headers.get('cache-status') ?? '', /fwd=miss/);
      assert.match((await rawPost('/chat/completions', request, {}, otherOrganizationKey)).headers.get('cache-status') ?? '', /fwd=miss/);
      assert.match((await rawPost('/chat/completions', { ...request, top_p: 0.5 })).headers.get('cache-status') ?? '', /fwd=miss/);
      assert.match(
        (await rawPost('/chat/completions', { ...request, user: 'someone', metadata: { a: 'b' } })).headers.get('cache-status') ?? '',
        /hit/,
      );
      assert.equal(openaiUpstream.requests.length, 4);
    });

    test('no-cache asks afresh, no-store bypasses, sampled requests bypass, bad directives are 400', async () => {
      const request = body();
      await rawPost('/chat/completions', request);
      const fresher = await rawPost('/chat/completions', request, { 'cache-control': 'no-cache' });
      assert.match(fresher.headers.get('cache-status') ?? '', /fwd=request/);
      assert.equal((JSON.parse(fresher.text) as { _metadata: { cache: string } })._metadata.cache, 'miss');
      const bypassed = await rawPost('/chat/completions', { ...request, switchyard_cache: { no_store: true } });
      assert.match(bypassed.headers.get('cache-status') ?? '', /fwd=bypass; detail=no-store/);
      assert.equal((JSON.parse(bypassed.text) as { _metadata: { cache: string } })._metadata.cache, 'bypass');
      const sampled = await rawPost('/chat/completions', { ...request, temperature: 0.7 });
      assert.match(sampled.headers.get('cache-status') ?? '', /detail=sampled/);
      const bodyNoCache = await rawPost('/chat/completions', { ...request, switchyard_cache: { no_cache: true } });
      assert.match(bodyNoCache.headers.get('cache-status') ?? '', /fwd=request/);
      assert.equal(openaiUpstream.requests.length, 5);
      const bad = await rawPost('/chat/completions', { ...request, switchyard_cache: { ttl_seconds: -1 } });
      assert.equal(bad.status, 400);
      assert.equal((JSON.parse(bad.text) as { error: { param: string } }).error.param, 'switchyard_cache.ttl_seconds');
      const unknown = await rawPost('/chat/completions', { ...request, switchyard_cache: { forever: true } });
      assert.equal(unknown.status, 400);
      assert.equal((JSON.parse(unknown.text) as { error: { param: string } }).error.param, 'switchyard_cache.forever');
      const notObject = await rawPost('/chat/completions', { ...request, switchyard_cache: 'no-cache' });
      assert.equal(notObject.status, 400);
    });

    test("a hit counts against the key's per-minute request limit", async () => {
      const request = body();
      await rawPost('/chat/completions', request);
      const first = await rawPost('/chat/completions', request);
      const second = await rawPost('/chat/completions', request);
      assert.match(second.headers.get('cache-status') ?? '', /hit/);
      const remaining = (response: { headers: Headers }) => Number(response.headers.get('x-ratelimit-remaining-requests'));
      assert.ok(Number.isInteger(remaining(first)));
      assert.equal(remaining(second), remaining(first) - 1);
    });

    test('a hit is recorded in the ledger as a cache hit with the tokens it saved, at no cost', async () => {
      const request = body();
      openaiUpstream.enqueue({
        type: 'reply',
        reply: { text: 'Costly answer', usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 } },
      });
      const live = await rawPost('/chat/completions', request);
      const hit = await rawPost('/chat/completions', request);
      const hitId = hit.headers.get('x-request-id')!;
      const liveId = live.headers.get('x-request-id')!;
      const rows = await until(async () => {
        const found = await server.runtime.database.db
          .selectFrom('usage_ledger')
          .select(['request_id', 'cache_hit', 'cache_saved_tokens', 'input_tokens', 'output_tokens', 'status_code'])
          .where('request_id', 'in', [hitId, liveId])
          .execute();
        return found.length === 2 ? found : undefined;
      }, 'both ledger rows');
      const hitRow = rows.find((row) => row.request_id === hitId)!;
      const liveRow = rows.find((row) => row.request_id === liveId)!;
      assert.equal(Number(hitRow.cache_hit), 1);
      assert.equal(Number(hitRow.cache_saved_tokens), 150);
      assert.equal(Number(hitRow.input_tokens) + Number(hitRow.output_tokens), 0);
      assert.equal(Number(liveRow.cache_hit), 0);
      assert.equal(Number(liveRow.input_tokens), 100);
    });

    test('the dashboard shows the requests and tokens the cache saved; an owner purges the organization, a member may not', async () => {
      await createOwner(server.runtime, 'org-switchyard-ai', 'owner@cache.test', 'a long enough password 1');
      await createOwner(server.runtime, 'org-switchyard-ai', 'member@cache.test', 'a long enough password 2', { role: 'member' });
      const owner = new DashboardClient(server.origin);
      assert.equal((await owner.signIn('owner@cache.test', 'a long enough password 1')).status, 200);
      const member = new DashboardClient(server.origin);
      assert.equal((await member.signIn('member@cache.test', 'a long enough password 2')).status, 200);
      const savings = await until(async () => {
        const response = await member.request('GET', 'cache/savings?days=1');
        return response.status === 200 && response.body.requests > 0 ? response.body : undefined;
      }, 'cache savings');
      assert.equal(savings.object, 'dashboard.cache_savings');
      assert.ok(savings.saved_tokens >= 150);
      assert.equal(typeof savings.saved_usd, 'number');
      assert.equal((await member.request('POST', 'cache/purge')).status, 403);
      const request = body();
      await rawPost('/chat/completions', request);
      assert.match((await rawPost('/chat/completions', request)).headers.get('cache-status') ?? '', /hit/);
      const purge = await owner.request('POST', 'cache/purge');
      assert.equal(purge.status, 200);
      assert.ok(purge.body.purged >= 1);
      assert.match((await rawPost('/chat/completions', request)).headers.get('cache-status') ?? '', /fwd=miss/);
    });
  });
});
