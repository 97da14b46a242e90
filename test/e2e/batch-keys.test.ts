// A batch and its own key, end to end (real server, official openai SDK): a key revoked mid-run fails
// the batch with `errors` naming the cause (not `completed` with lines failed with 401), a running
// batch does not spend its owner's per-minute request budget (their own calls are not 429), and a batch
// is no way around an endpoint permission: refused at creation without it, and lines of a key that
// loses it mid-run fail with `permission_denied`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { Permission } from '../../src/config/index.ts';
import { ManualClock } from '../batches/support/manual-clock.ts';
import { startBatchTestServer, type BatchTestServer } from '../batches/support/batch-test-server.ts';
import { until } from '../support/until.ts';

function embeddingLines(count: number): string {
  return Array.from({ length: count }, (_, index) =>
    JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/embeddings', body: { input: `hello ${index}` } }),
  ).join('\n');
}

function chatLines(count: number): string {
  return Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      custom_id: `line-${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'switchyard-echo', messages: [{ role: 'user', content: `hello ${index}` }], max_tokens: 20 },
    }),
  ).join('\n');
}

const PERMISSIONS: Permission[] = ['chat.completions', 'files', 'batches', 'models'];

describe('a batch and its own key', () => {
  const clock = new ManualClock();
  let server: BatchTestServer;

  before(async () => {
    server = await startBatchTestServer({
      runtime: { clock },
      config: {
        tiers: {
          Developer: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 5,
            permissions: PERMISSIONS,
          },
          // One token a day: every line is put off (daily quota 429), so the batch stays in progress.
          Trickle: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 1,
            tokensPerMonth: 0,
            concurrentBatches: 5,
            permissions: PERMISSIONS,
          },
          // Six requests a minute for the key itself.
          Tiny: {
            requestsPerMinute: 6,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 5,
            permissions: PERMISSIONS,
          },
        },
      },
    });
  });
  after(async () => {
    await server.close();
  });

  test('a key revoked mid-run: in_progress -> failed, errors name the cause, every line in the error file', async () => {
    const owner = await server.createKey({ tier: 'Trickle', organization: 'org-revoked' });
    const client = new OpenAI({ apiKey: owner.key, baseURL: server.baseUrl, maxRetries: 0 });
    const input = await client.files.create({ file: await toFile(Buffer.from(chatLines(3)), 'input.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const database = server.runtime.database.db;
    // Every line met the daily quota and waits for its retry time.
    const retryAt = await until(async () => {
      const rows = await database
        .selectFrom('batch_requests')
        .select(['attempts', 'next_attempt_at'])
        .where('batch_id', '=', created.id)
        .execute();
      return rows.length === 3 && rows.every((row) => Number(row.attempts) >= 1)
        ? Math.max(...rows.map((row) => Number(row.next_attempt_at)))
        : undefined;
    }, 'every line to be rate limited');
    assert.equal((await client.batches.retrieve(created.id)).status, 'in_progress');

    assert.equal(await server.runtime.keys.revoke(owner.id), true);
    // The authenticator sees the revocation within its poll interval.
    await until(
      async () =>
        (await fetch(`${server.baseUrl}/batches`, { headers: { authorization: `Bearer ${owner.key}` } })).status === 401 ? true : undefined,
      'the revocation to be seen',
    );
    clock.advance(retryAt - clock.now() + 1);
    server.runtime.batchWorker?.wake();

    const failed = await until(async () => {
      const batch = await server.runtime.batches.retrieve(
        { keyId: owner.id, organizationId: 'org-revoked', tier: 'Trickle', permissions: new Set(['batches']), expiresAt: null },
        created.id,
      );
      return batch.status === 'failed' && batch.resultsWritten ? batch : undefined;
    }, 'the batch to fail');
    assert.equal(failed.errors?.[0]?.code, 'invalid_api_key');
    assert.match(failed.errors?.[0]?.message ?? '', /key can no longer run it/);
    assert.deepEqual([failed.total, failed.completed, failed.failed], [3, 0, 3]);
    assert.notEqual(failed.errorFileId, null);
    const content = await server.runtime.files.openContent('org-revoked', failed.errorFileId!);
    let text = '';
    for await (const chunk of content.content) text += String(chunk);
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { custom_id: string; error: { code: string } });
    assert.deepEqual(lines.map((line) => line.custom_id).sort(), ['line-0', 'line-1', 'line-2']);
    for (const line of lines) assert.equal(line.error.code, 'batch_failed');
  });

  test("a running batch does not spend its key's per-minute requests: GET /v1/batches/{id} and chat still answer", async () => {
    const owner = await server.createKey({ tier: 'Tiny', organization: 'org-tiny' });
    const client = new OpenAI({ apiKey: owner.key, baseURL: server.baseUrl, maxRetries: 0 });
    const input = await client.files.create({ file: await toFile(Buffer.from(chatLines(20)), 'input.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    // Watched through the database, not the API: the key's own budget is for the calls below.
    await until(async () => {
      const row = await server.runtime.database.db.selectFrom('batches').select(['status']).where('id', '=', created.id).executeTakeFirst();
      return row?.status === 'completed' ? true : undefined;
    }, 'the batch to complete');
    const batch = await client.batches.retrieve(created.id);
    assert.equal(batch.status, 'completed');
    assert.equal(batch.request_counts?.completed, 20);
    const answer = await client.chat.completions.create({
      model: 'switchyard-echo',
      messages: [{ role: 'user', content: 'still here?' }],
      max_tokens: 10,
    });
    assert.equal(answer.object, 'chat.completion');
  });

  test('an embeddings batch from a key without `embeddings` is refused at creation: 403 permission_denied', async () => {
    // The input file comes from a key of the same organization that may upload; the batch key may not embed.
    const uploader = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    const input = await uploader.files.create({ file: await toFile(Buffer.from(embeddingLines(2)), 'input.jsonl'), purpose: 'batch' });
    const owner = await server.createKey({ tier: 'Developer', permissions: ['batches', 'chat.completions', 'files'] });
    const client = new OpenAI({ apiKey: owner.key, baseURL: server.baseUrl, maxRetries: 0 });
    const direct = await client.embeddings.create({ model: 'switchyard-embeddings', input: 'hello' }).catch((error: unknown) => error);
    assert.ok(direct instanceof OpenAI.PermissionDeniedError);
    const refused = await client.batches
      .create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' })
      .catch((error: unknown) => error);
    assert.ok(refused instanceof OpenAI.PermissionDeniedError, `expected a 403, got ${String(refused)}`);
    assert.equal(refused.status, 403);
    assert.equal(refused.code, 'permission_denied');
    assert.equal((refused.error as { type?: string }).type, 'permission_error');
    assert.match(refused.message, /'embeddings' permission/);
    const rows = await server.runtime.database.db.selectFrom('batches').select('id').where('key_id', '=', owner.id).execute();
    assert.deepEqual(rows, [], 'nothing recorded for a refused batch');
    // The same key may still batch what it may call.
    const chatInput = await client.files.create({ file: await toFile(Buffer.from(chatLines(1)), 'chat.jsonl'), purpose: 'batch' });
    const accepted = await client.batches.create({
      input_file_id: chatInput.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    assert.equal(accepted.status, 'validating');
  });

  test('a key that loses the endpoint permission mid-run: its remaining lines fail with permission_denied', async () => {
    const owner = await server.createKey({ tier: 'Trickle', organization: 'org-narrowed' });
    const client = new OpenAI({ apiKey: owner.key, baseURL: server.baseUrl, maxRetries: 0 });
    const input = await client.files.create({ file: await toFile(Buffer.from(chatLines(3)), 'input.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const database = server.runtime.database.db;
    const retryAt = await until(async () => {
      const rows = await database
        .selectFrom('batch_requests')
        .select(['attempts', 'next_attempt_at'])
        .where('batch_id', '=', created.id)
        .execute();
      return rows.length === 3 && rows.every((row) => Number(row.attempts) >= 1)
        ? Math.max(...rows.map((row) => Number(row.next_attempt_at)))
        : undefined;
    }, 'every line to be rate limited');

    // Narrow the key: no more chat.completions (as an operator editing the key would), and tell every
    // instance's key cache through the version counter.
    await database.transaction().execute(async (transaction) => {
      await transaction
        .updateTable('api_keys')
        .set({ permissions: JSON.stringify(['files', 'batches', 'models']) })
        .where('id', '=', owner.id)
        .execute();
      await transaction
        .updateTable('counters')
        .set((eb) => ({ value: eb('value', '+', 1) }))
        .where('name', '=', 'keys_version')
        .execute();
    });
    await until(async () => {
      const answer = await fetch(`${server.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
      });
      return answer.status === 403 ? true : undefined;
    }, 'the narrowed permissions to be seen');
    clock.advance(retryAt - clock.now() + 1);
    server.runtime.batchWorker?.wake();

    const done = await until(async () => {
      const row = await database
        .selectFrom('batches')
        .select(['status', 'error_file_id', 'failed', 'completed'])
        .where('id', '=', created.id)
        .executeTakeFirst();
      return row?.status === 'completed' && row.error_file_id !== null ? row : undefined;
    }, 'the batch to finish');
    assert.deepEqual([Number(done.completed), Number(done.failed)], [0, 3]);
    const content = await server.runtime.files.openContent('org-narrowed', done.error_file_id!);
    let text = '';
    for await (const chunk of content.content) text += String(chunk);
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { response: { status_code: number; body: { error: { code: string; type: string } } } });
    assert.equal(lines.length, 3);
    for (const line of lines) {
      assert.equal(line.response.status_code, 403);
      assert.equal(line.response.body.error.code, 'permission_denied');
      assert.equal(line.response.body.error.type, 'permission_error');
    }
  });
});
