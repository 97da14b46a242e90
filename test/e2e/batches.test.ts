// Batches end to end: a real server, the official openai SDK, the SPEC batch workflow (upload, create,
// poll until completed, download output and error files), cancellation, listing, every error code,
// and expiry under an injected clock. Lines run through the real /v1/chat/completions route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { ManualClock } from '../batches/support/manual-clock.ts';
import { startBatchTestServer, type BatchTestServer } from '../batches/support/batch-test-server.ts';

interface InputLine {
  custom_id: string;
  body: Record<string, unknown>;
  url?: string;
}

function jsonl(lines: InputLine[], url = '/v1/chat/completions'): string {
  return `${lines.map((line) => JSON.stringify({ custom_id: line.custom_id, method: 'POST', url: line.url ?? url, body: line.body })).join('\n')}\n`;
}

function chatLine(customId: string, text: string): InputLine {
  return { custom_id: customId, body: { model: 'switchyard-echo', messages: [{ role: 'user', content: text }], max_tokens: 50 } };
}

async function upload(client: OpenAI, content: string, purpose: 'batch' | 'user_data' = 'batch'): Promise<string> {
  return (await client.files.create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose })).id;
}

async function pollUntil(
  client: OpenAI,
  batchId: string,
  done: (batch: OpenAI.Batch) => boolean,
  timeoutMs = 20_000,
): Promise<OpenAI.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(batchId);
    if (done(batch)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${batchId} still ${batch.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function readJsonl(client: OpenAI, fileId: string | null | undefined): Promise<Array<Record<string, any>>> {
  assert.ok(typeof fileId === 'string', 'a result file id');
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

type ApiError = InstanceType<typeof OpenAI.APIError>;

function rejectsCode(
  promise: Promise<unknown>,
  errorClass: abstract new (...args: never[]) => ApiError,
  code: string,
  param?: string,
): Promise<void> {
  return assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${String(error)}`);
    assert.equal(error.code, code);
    if (param !== undefined) assert.equal(error.param, param);
    return true;
  });
}

describe('batches end to end (worker running)', () => {
  let server: BatchTestServer;
  let client: OpenAI;

  before(async () => {
    server = await startBatchTestServer();
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
  });

  test('the SPEC workflow: upload, create (validating, zero counts), poll until completed, download results', async () => {
    const inputFileId = await upload(
      client,
      jsonl([
        chatLine('request-1', 'first question'),
        chatLine('request-2', 'second question'),
        { custom_id: 'request-bad', body: { model: 'switchyard-echo', messages: 'not a list' } },
        chatLine('request-3', 'third question'),
      ]),
    );
    const created = await client.batches.create({
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { project: 'e2e' },
    });
    assert.match(created.id, /^batch-/);
    assert.equal(created.object, 'batch');
    assert.equal(created.status, 'validating');
    assert.deepEqual(created.request_counts, { total: 0, completed: 0, failed: 0 });
    assert.equal(created.endpoint, '/v1/chat/completions');
    assert.equal(created.input_file_id, inputFileId);
    assert.equal(created.completion_window, '24h');
    assert.equal(created.expires_at, created.created_at + 86_400);
    assert.deepEqual(created.metadata, { project: 'e2e' });
    assert.equal(created.errors, null);
    for (const field of [
      'output_file_id',
      'error_file_id',
      'in_progress_at',
      'finalizing_at',
      'completed_at',
      'failed_at',
      'expired_at',
      'cancelling_at',
      'cancelled_at',
    ] as const) {
      assert.equal(created[field], null, field);
    }

    const done = await pollUntil(client, created.id, (batch) => batch.status === 'completed');
    assert.deepEqual(done.request_counts, { total: 4, completed: 3, failed: 1 });
    assert.equal(typeof done.in_progress_at, 'number');
    assert.equal(typeof done.finalizing_at, 'number');
    assert.equal(typeof done.completed_at, 'number');

    const output = await readJsonl(client, done.output_file_id);
    const byId = new Map(output.map((line) => [line['custom_id'], line]));
    assert.deepEqual([...byId.keys()].sort(), ['request-1', 'request-2', 'request-3']);
    const first = byId.get('request-1')!;
    assert.match(first['id'], /^batch_req_/);
    assert.equal(first['error'], null);
    assert.equal(first['response'].status_code, 200);
    assert.match(first['response'].request_id, /^req_/);
    assert.equal(first['response'].body.object, 'chat.completion');
    assert.equal(first['response'].body.choices[0].message.content, 'Echo: first question');
    assert.equal(byId.get('request-3')!['response'].body.choices[0].message.content, 'Echo: third question');

    const errors = await readJsonl(client, done.error_file_id);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!['custom_id'], 'request-bad');
    assert.equal(errors[0]!['error'].code, 'invalid_request');
    assert.equal(typeof errors[0]!['error'].message, 'string');
    assert.equal(errors[0]!['response'].status_code, 400);
    assert.equal(errors[0]!['response'].body.error.type, 'invalid_request_error');

    const outputFile = await client.files.retrieve(done.output_file_id!);
    assert.equal(outputFile.purpose, 'batch_output');

    // The lines were metered as batch requests (50% price) under the creating key.
    const requestIds = output.map((line) => line['response'].request_id as string);
    const deadline = Date.now() + 10_000;
    let rows: Array<{ request_id: string; batch: number }> = [];
    while (rows.length < requestIds.length && Date.now() < deadline) {
      rows = await server.runtime.database.db
        .selectFrom('usage_ledger')
        .select(['request_id', 'batch'])
        .where('request_id', 'in', requestIds)
        .execute();
      if (rows.length < requestIds.length) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(rows.length, requestIds.length, 'every line is in the usage ledger');
    assert.ok(rows.every((row) => Number(row.batch) === 1));
  });

  test('a /v1/responses batch runs through the responses route', async () => {
    const inputFileId = await upload(
      client,
      jsonl(
        [
          { custom_id: 'resp-1', body: { model: 'switchyard-echo', input: 'hello responses', max_output_tokens: 50 } },
          { custom_id: 'resp-2', body: { model: 'switchyard-echo', input: 'second', max_output_tokens: 50, store: false } },
        ],
        '/v1/responses',
      ),
    );
    const created = await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/responses', completion_window: '24h' });
    const done = await pollUntil(client, created.id, (batch) => batch.status === 'completed');
    assert.deepEqual(done.request_counts, { total: 2, completed: 2, failed: 0 });
    const output = await readJsonl(client, done.output_file_id);
    const first = output.find((line) => line['custom_id'] === 'resp-1')!;
    assert.equal(first['response'].status_code, 200);
    assert.equal(first['response'].body.object, 'response');
    assert.match(first['response'].body.id, /^resp_[0-9a-f]{48}$/);
    assert.equal(first['response'].body.output[0].content[0].text, 'Echo: hello responses');
    assert.equal(done.error_file_id, null);
  });

  test('a /v1/embeddings batch with the built-in embedding model', async () => {
    const inputFileId = await upload(
      client,
      jsonl(
        [
          { custom_id: 'emb-1', body: { model: 'switchyard-embeddings', input: 'the first sentence' } },
          { custom_id: 'emb-2', body: { model: 'switchyard-embeddings', input: ['two', 'texts'], encoding_format: 'float' } },
          { custom_id: 'emb-bad', body: { model: 'switchyard-embeddings' } },
        ],
        '/v1/embeddings',
      ),
    );
    const created = await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/embeddings', completion_window: '24h' });
    const done = await pollUntil(client, created.id, (batch) => batch.status === 'completed', 60_000);
    assert.deepEqual(done.request_counts, { total: 3, completed: 2, failed: 1 });
    const output = await readJsonl(client, done.output_file_id);
    const second = output.find((line) => line['custom_id'] === 'emb-2')!;
    assert.equal(second['response'].body.object, 'list');
    assert.equal(second['response'].body.data.length, 2);
    assert.equal(typeof second['response'].body.data[1].embedding[0], 'number');
    const errors = await readJsonl(client, done.error_file_id);
    assert.deepEqual(
      errors.map((line) => [line['custom_id'], line['error'].code, line['response'].status_code]),
      [['emb-bad', 'invalid_request', 400]],
    );
  });

  test('an input file that is not valid JSONL fails the batch with line-numbered invalid_jsonl errors', async () => {
    const inputFileId = await upload(client, `${jsonl([chatLine('ok', 'x')])}this is not json\n${jsonl([chatLine('ok', 'duplicate id')])}`);
    const created = await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const failed = await pollUntil(client, created.id, (batch) => batch.status === 'failed');
    assert.equal(typeof failed.failed_at, 'number');
    assert.equal(failed.errors?.object, 'list');
    assert.deepEqual(
      failed.errors?.data?.map((error) => [error.code, error.line, error.param]),
      [
        ['invalid_jsonl', 2, null],
        ['invalid_jsonl', 3, 'custom_id'],
      ],
    );
    assert.equal(failed.output_file_id, null);
    assert.equal(failed.error_file_id, null);
  });

  test('an empty input file fails the batch', async () => {
    const inputFileId = await upload(client, '\n');
    const created = await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const failed = await pollUntil(client, created.id, (batch) => batch.status === 'failed');
    assert.equal(failed.errors?.data?.[0]?.code, 'invalid_jsonl');
  });

  test('a completed batch cannot be canceled: 409 cannot_cancel, not retried by the SDK', async () => {
    const created = await client.batches.create({
      input_file_id: await upload(client, jsonl([chatLine('only', 'x')])),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await pollUntil(client, created.id, (batch) => batch.status === 'completed');
    const retrying = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 2 });
    await rejectsCode(retrying.batches.cancel(created.id), OpenAI.ConflictError, 'cannot_cancel');
  });
});

describe('batches end to end (worker stopped: states held still)', () => {
  let server: BatchTestServer;
  let client: OpenAI;
  let inputFileId: string;

  before(async () => {
    server = await startBatchTestServer({
      runtime: { batchWorker: false },
      config: {
        tiers: {
          Free: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 0,
            permissions: ['files', 'batches', 'models'],
          },
          Developer: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 3,
            permissions: ['chat.completions', 'embeddings', 'files', 'batches', 'models'],
          },
        },
      },
    });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
    inputFileId = await upload(client, jsonl([chatLine('a', 'x')]));
  });
  after(async () => {
    await server.close();
  });

  const create = (overrides: Record<string, unknown> = {}, target = client) =>
    target.batches.create({
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      ...overrides,
    } as OpenAI.BatchCreateParams);

  test('cancel a validating batch: canceled at once; canceling again is 409 cannot_cancel', async () => {
    const created = await create();
    const canceled = await client.batches.cancel(created.id);
    assert.equal(canceled.status, 'canceled');
    assert.equal(typeof canceled.cancelled_at, 'number');
    assert.equal(typeof canceled.cancelling_at, 'number');
    assert.equal((await client.batches.retrieve(created.id)).status, 'canceled');
    await rejectsCode(client.batches.cancel(created.id), OpenAI.ConflictError, 'cannot_cancel');
  });

  test('Free tier: 403 batch_api_not_allowed, even with the batches permission', async () => {
    const free = await server.createKey({ tier: 'Free' });
    const freeClient = new OpenAI({ apiKey: free.key, baseURL: server.baseUrl, maxRetries: 0 });
    await rejectsCode(create({}, freeClient), OpenAI.PermissionDeniedError, 'batch_api_not_allowed');
    await rejectsCode(freeClient.batches.list(), OpenAI.PermissionDeniedError, 'batch_api_not_allowed');
    const noPermission = await server.createKey({ permissions: ['files', 'models'] });
    await rejectsCode(
      create({}, new OpenAI({ apiKey: noPermission.key, baseURL: server.baseUrl, maxRetries: 0 })),
      OpenAI.PermissionDeniedError,
      'permission_denied',
    );
  });

  test('400 missing_required_field with param, for each required field', async () => {
    for (const field of ['input_file_id', 'endpoint', 'completion_window']) {
      await rejectsCode(create({ [field]: undefined }), OpenAI.BadRequestError, 'missing_required_field', field);
    }
  });

  test('400 invalid_endpoint, invalid_parameter for the window and metadata', async () => {
    await rejectsCode(create({ endpoint: '/v1/completions' }), OpenAI.BadRequestError, 'invalid_endpoint', 'endpoint');
    await rejectsCode(create({ completion_window: '48h' }), OpenAI.BadRequestError, 'invalid_parameter', 'completion_window');
    await rejectsCode(create({ metadata: { key: 5 } }), OpenAI.BadRequestError, 'invalid_parameter', 'metadata.key');
  });

  test('400 invalid_input_file: unknown file, wrong purpose, deleted file, another organization', async () => {
    await rejectsCode(create({ input_file_id: 'file-doesnotexist' }), OpenAI.BadRequestError, 'invalid_input_file', 'input_file_id');
    await rejectsCode(
      create({ input_file_id: await upload(client, jsonl([chatLine('a', 'x')]), 'user_data') }),
      OpenAI.BadRequestError,
      'invalid_input_file',
    );
    const deleted = await upload(client, jsonl([chatLine('a', 'x')]));
    await client.files.delete(deleted);
    await rejectsCode(create({ input_file_id: deleted }), OpenAI.BadRequestError, 'invalid_input_file');
    const stranger = new OpenAI({
      apiKey: (await server.createKey({ organization: 'org-other' })).key,
      baseURL: server.baseUrl,
      maxRetries: 0,
    });
    await rejectsCode(create({}, stranger), OpenAI.BadRequestError, 'invalid_input_file');
  });

  test('404 batch_not_found for unknown ids and for another organization, on retrieve and cancel', async () => {
    const created = await create();
    await rejectsCode(client.batches.retrieve('batch-doesnotexist'), OpenAI.NotFoundError, 'batch_not_found');
    const stranger = new OpenAI({
      apiKey: (await server.createKey({ organization: 'org-elsewhere' })).key,
      baseURL: server.baseUrl,
      maxRetries: 0,
    });
    await rejectsCode(stranger.batches.retrieve(created.id), OpenAI.NotFoundError, 'batch_not_found');
    await rejectsCode(stranger.batches.cancel(created.id), OpenAI.NotFoundError, 'batch_not_found');
    await client.batches.cancel(created.id);
  });

  test('429 concurrent_batches_limit (rate_limit_exceeded) past the tier limit; a cancel frees a slot', async () => {
    const limiter = new OpenAI({
      apiKey: (await server.createKey({ organization: 'org-limits' })).key,
      baseURL: server.baseUrl,
      maxRetries: 0,
    });
    const ownFile = await upload(limiter, jsonl([chatLine('a', 'x')]));
    const active: OpenAI.Batch[] = [];
    for (let index = 0; index < 3; index++) active.push(await create({ input_file_id: ownFile }, limiter));
    await assert.rejects(create({ input_file_id: ownFile }, limiter), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError);
      assert.equal(error.code, 'concurrent_batches_limit');
      assert.equal(error.type, 'rate_limit_exceeded');
      assert.equal(error.headers.get('x-should-retry'), 'false');
      // SPEC rate-limit details: reset is a date-time (here: when the oldest active batch's window ends at the latest).
      const details = (error.error as { details?: { limit: number; remaining: number; reset: string; retry_after: number | null } })
        .details;
      assert.equal(details?.limit, 3);
      assert.equal(details?.remaining, 0);
      assert.equal(details?.retry_after, null);
      assert.match(details?.reset ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      assert.equal(Math.floor(Date.parse(details!.reset) / 1000), active[0]!.expires_at);
      return true;
    });
    await limiter.batches.cancel(active[0]!.id);
    const again = await create({ input_file_id: ownFile }, limiter);
    assert.equal(again.status, 'validating');
  });

  test('list: newest first with SDK auto-pagination, a status filter, and bad parameters', async () => {
    const lister = new OpenAI({
      apiKey: (await server.createKey({ organization: 'org-list' })).key,
      baseURL: server.baseUrl,
      maxRetries: 0,
    });
    const ownFile = await upload(lister, jsonl([chatLine('a', 'x')]));
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const created = await create({ input_file_id: ownFile }, lister);
      ids.push(created.id);
      // Stay under the tier's three active batches.
      await lister.batches.cancel(created.id);
    }
    const seen: string[] = [];
    for await (const batch of lister.batches.list({ limit: 2 })) seen.push(batch.id);
    assert.deepEqual(seen, [...ids].reverse());
    const page = await lister.batches.list({ limit: 2 });
    assert.equal(page.has_more, true);
    const rawPage = (await lister.get('/batches', { query: { limit: 2 } })) as Record<string, unknown>;
    assert.deepEqual(Object.keys(rawPage).sort(), ['_metadata', 'data', 'first_id', 'has_more', 'last_id', 'object']);
    const canceled = (await lister.get('/batches', { query: { status: 'canceled', limit: 100 } })) as { data: Array<{ id: string }> };
    assert.equal(canceled.data.length, 5);
    const completed = (await lister.get('/batches', { query: { status: 'completed' } })) as { data: unknown[] };
    assert.deepEqual(completed.data, []);
    await rejectsCode(lister.get('/batches', { query: { status: 'done' } }), OpenAI.BadRequestError, 'invalid_parameter', 'status');
    await rejectsCode(lister.get('/batches', { query: { limit: 101 } }), OpenAI.BadRequestError, 'invalid_parameter', 'limit');
  });
});

describe('batches end to end: expiry under an injected clock', () => {
  let server: BatchTestServer;
  const clock = new ManualClock(Date.now());

  before(async () => {
    server = await startBatchTestServer({
      runtime: { clock, batchWorker: { pollIntervalMs: 20 } },
      config: {
        tiers: {
          Developer: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 0,
            tokensPerMonth: 0,
            concurrentBatches: 5,
            permissions: ['chat.completions', 'files', 'batches', 'models'],
          },
          // One token a day: batch lines are outside the per-minute limits but inside the daily quota, so
          // every line is rate limited (and the requests of the batch API itself still pass).
          Trickle: {
            requestsPerMinute: 0,
            tokensPerMinute: 0,
            tokensPerDay: 1,
            tokensPerMonth: 0,
            concurrentBatches: 5,
            permissions: ['chat.completions', 'files', 'batches', 'models'],
          },
        },
      },
    });
  });
  after(async () => {
    await server.close();
  });

  test('rate-limited lines wait (not fail); 24 hours later the batch expires and they go to the error file as batch_expired', async () => {
    // The daily quota is the organization's plan (accounts/plans.ts): the Trickle key has an
    // organization of its own, on the Trickle plan, which uploads, watches and reads the results too.
    const trickle = new OpenAI({
      apiKey: (await server.createKey({ tier: 'Trickle', organization: 'org-trickle' })).key,
      baseURL: server.baseUrl,
      maxRetries: 0,
    });
    const watcher = trickle;
    const inputFileId = await upload(watcher, jsonl([chatLine('one', 'a'), chatLine('two', 'b'), chatLine('three', 'c')]));
    const created = await trickle.batches.create({
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await pollUntil(watcher, created.id, (batch) => batch.status === 'in_progress');
    // Wait until the worker met the 429s and put the lines off (they stay pending, not failed).
    const database = server.runtime.database.db;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const deferred = await database
        .selectFrom('batch_requests')
        .select('line')
        .where('batch_id', '=', created.id)
        .where('state', '=', 'pending')
        .where('attempts', '>=', 1)
        .execute();
      if (deferred.length >= 1) break;
      if (Date.now() > deadline) throw new Error('no line was rate limited');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const waiting = await watcher.batches.retrieve(created.id);
    assert.equal(waiting.status, 'in_progress');
    assert.equal(waiting.request_counts?.failed, 0, 'a 429 is not a failure');

    clock.advance(86_400_000);
    const expired = await pollUntil(watcher, created.id, (batch) => batch.status === 'expired');
    assert.equal(typeof expired.expired_at, 'number');
    const counts = expired.request_counts!;
    assert.equal(counts.total, 3);
    assert.equal(counts.completed + counts.failed, 3);
    assert.ok(counts.failed >= 1);
    const errors = await readJsonl(watcher, expired.error_file_id);
    assert.equal(errors.length, counts.failed);
    for (const line of errors) {
      assert.equal(line['error'].code, 'batch_expired');
      assert.equal(line['response'], null);
    }
    const completed = counts.completed === 0 ? [] : await readJsonl(watcher, expired.output_file_id);
    assert.deepEqual([...completed, ...errors].map((line) => line['custom_id']).sort(), ['one', 'three', 'two']);
  });
});
