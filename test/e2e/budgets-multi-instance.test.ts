// The done-when test of money budgets: three `switchyard serve` processes on one Postgres and one
// Redis, 1,000 concurrent chat requests (JSON and streamed, max_tokens set) from 20 keys of one
// organization against a $1.00 organization budget and $0.10 key budgets: the ledger's total for the
// period never exceeds a budget (0 overrun), every refusal is `budget_exceeded`. Then a batch of an
// organization with a small budget: lines past it fail with `budget_exceeded` in the error file, the
// batch completes, and its ledger stays within the budget. Needs TEST_DATABASE_URL and TEST_REDIS_URL
// (a fresh key prefix on the shared Redis); skipped LOUDLY otherwise.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { randomHex } from '../../src/core/ids.ts';
import { startRuntime } from '../../src/runtime.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { until } from '../support/until.ts';

const INSTANCES = 3;
const KEYS = 20;
/** Scale down with BUDGET_TEST_REQUESTS on a slow machine; the structure stays. */
const REQUESTS = Number(process.env['BUDGET_TEST_REQUESTS'] ?? 1_000);
const ORGANIZATION_BUDGET = 1_000_000; // $1.00
const KEY_BUDGET = 100_000; // $0.10
/** 100 USD per million input tokens (100 micro-USD each), 200 per million output tokens. */
const PRICES = { inputPerMillion: 100, outputPerMillion: 200 };

const redisUrl = process.env['TEST_REDIS_URL'];
const runnable = Boolean(process.env['TEST_DATABASE_URL']) && Boolean(redisUrl);
if (!runnable) console.warn('\n*** SKIPPED: budgets across three instances (set TEST_DATABASE_URL and TEST_REDIS_URL) ***\n');

describe(`money budgets across ${INSTANCES} instances (Postgres + Redis)`, { skip: !runnable }, () => {
  let database: TestDatabase;
  const upstream = new MockOpenAIServer();
  const instances: ServerProcess[] = [];
  let directory = '';
  let env: NodeJS.ProcessEnv = {};
  const organization = `org-spend-${randomHex(6)}`;
  const batchOrganization = `org-batch-${randomHex(6)}`;
  const keys: Array<{ key: string; id: string }> = [];
  let batchKey = '';

  before(async () => {
    database = (await createPostgresTestDatabase())!;
    await upstream.start();
    directory = mkdtempSync(join(tmpdir(), 'switchyard-budgets-'));
    const configFile = join(directory, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        bootstrapKey: false,
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'priced', provider: 'up', capabilities: ['chat', 'streaming'], maxOutputTokens: 4096, pricing: PRICES }],
      }),
    );
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `test-budgets-${randomHex(6)}:`,
      SWITCHYARD_CONFIG: configFile,
      BATCH_CONCURRENCY: '8',
      // Files shared by every instance (the batch's input is read by whichever instance claims it).
      FILES_STORE: 'postgres',
    };
    // Keys and budgets are set up through the runtime's own services on the shared database.
    const setupDir = mkdtempSync(join(directory, 'setup-'));
    const config = loadConfig({ env: { ...env, DATA_DIR: setupDir } as NodeJS.ProcessEnv, overrides: { logLevel: 'silent' } });
    const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false, alertDispatcher: false });
    try {
      for (let index = 0; index < KEYS; index++) {
        const created = await runtime.keys.create({ tier: 'Developer', name: `k${index}`, organization });
        keys.push({ key: created.key, id: created.record.id });
      }
      await runtime.budgets.setOrganizationBudget(organization, { period: 'month', amountMicroUsd: ORGANIZATION_BUDGET }, 'test');
      for (const key of keys)
        await runtime.budgets.setKeyBudget(organization, 'Developer', key.id, { period: 'month', amountMicroUsd: KEY_BUDGET }, 'test');
      batchKey = (await runtime.keys.create({ tier: 'Developer', name: 'batch', organization: batchOrganization })).key;
      await runtime.budgets.setOrganizationBudget(batchOrganization, { period: 'day', amountMicroUsd: 20_000 }, 'test');
    } finally {
      await runtime.close();
    }
    for (let index = 0; index < INSTANCES; index++) {
      const dataDir = mkdtempSync(join(directory, `instance-${index}-`));
      instances.push(await startServerProcess({ ...env, DATA_DIR: dataDir }));
    }
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await upstream.close();
    await database?.drop();
    if (directory !== '') rmSync(directory, { recursive: true, force: true });
  });

  async function ledger(organizationId: string): Promise<{ rows: number; total: number; perKey: Map<string, number> }> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const result = await client.query<{ key_id: string; rows: string; spent: string }>(
        'select key_id, count(*) as rows, sum(cost_micro_usd) as spent from usage_ledger where organization_id = $1 group by key_id',
        [organizationId],
      );
      const perKey = new Map(result.rows.map((row) => [row.key_id, Number(row.spent)]));
      return {
        rows: result.rows.reduce((sum, row) => sum + Number(row.rows), 0),
        total: [...perKey.values()].reduce((sum, spent) => sum + spent, 0),
        perKey,
      };
    } finally {
      await client.end();
    }
  }

  test(`${REQUESTS} concurrent chat requests from ${KEYS} keys: the ledger never exceeds a budget`, async () => {
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, index) => {
        const stream = index % 2 === 1;
        const response = await fetch(`${instances[index % INSTANCES]!.origin}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys[index % KEYS]!.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'priced',
            max_tokens: 40,
            stream,
            ...(stream ? { stream_options: { include_usage: true } } : {}),
            messages: [{ role: 'user', content: `Request ${index}: say something short about budgets and promises.` }],
          }),
        });
        const text = await response.text();
        return {
          status: response.status,
          code: response.status === 200 ? '' : `${response.status} ${(JSON.parse(text) as any).error.code as string}`,
        };
      }),
    );
    const served = outcomes.filter((outcome) => outcome.status === 200).length;
    const refused = outcomes.filter((outcome) => outcome.status === 429);
    const unexpected = outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 429);
    // On failure: how many of each answer, and what the instances logged at warn and above (the cause).
    const diagnosis = (): string => {
      const counts = new Map<string, number>();
      for (const outcome of unexpected) counts.set(outcome.code, (counts.get(outcome.code) ?? 0) + 1);
      const logged = instances.flatMap((instance) =>
        instance
          .output()
          .split('\n')
          .filter((line) => /"level":(40|50|60)/.test(line))
          .slice(0, 5),
      );
      return `${JSON.stringify([...counts])}\n${logged.join('\n')}`;
    };
    assert.equal(served + refused.length, REQUESTS, unexpected.length === 0 ? '' : diagnosis());
    assert.ok(served > 0, 'requests within the budgets are served');
    assert.ok(refused.length > 0, 'the budgets refuse the rest');
    assert.ok(
      refused.every((outcome) => outcome.code === '429 budget_exceeded'),
      [...new Set(refused.map((outcome) => outcome.code))].join(','),
    );
    // Every served request reaches the ledger (each instance flushes within a second or so).
    const written = await until(async () => {
      const now = await ledger(organization);
      return now.rows === served ? now : undefined;
    }, `${served} ledger rows`);
    assert.ok(written.total <= ORGANIZATION_BUDGET, `organization spent ${written.total} of ${ORGANIZATION_BUDGET} micro-USD`);
    for (const [keyId, spent] of written.perKey) assert.ok(spent <= KEY_BUDGET, `key ${keyId} spent ${spent} of ${KEY_BUDGET} micro-USD`);
    console.log(
      `budgets: ${served} served, ${refused.length} refused; organization spent ${written.total} of ${ORGANIZATION_BUDGET} micro-USD, ` +
        `most by one key ${Math.max(...written.perKey.values())} of ${KEY_BUDGET}`,
    );
    // Every instance reads the same shared figures: exactly what the ledger holds once every settlement
    // has landed (one that could not reach Redis on a loaded machine is kept and tried again, so the
    // figures may trail the ledger for a moment; a lost settlement never catches up and fails here).
    const readFigures = () =>
      Promise.all(
        instances.map(async (instance) => {
          const status: any = await (
            await fetch(`${instance.origin}/v1/auth/key`, { headers: { authorization: `Bearer ${keys[0]!.key}` } })
          ).json();
          return status.budgets.map((budget: any) => budget.spent_micro_usd) as number[];
        }),
      );
    let figures = await readFigures();
    await until(async () => {
      figures = await readFigures();
      return figures.every((read) => read[0] === written.total) ? true : undefined;
    }, 'the shared budget figures to reach the ledger total').catch(() => undefined);
    assert.deepEqual(figures[1], figures[0]);
    assert.deepEqual(figures[2], figures[0]);
    assert.equal(figures[0]![0], written.total, 'the organization budget counted exactly what the ledger holds');
  });

  test('a batch past its organization budget: the lines that do not fit fail with budget_exceeded, the batch completes', async () => {
    const client = new OpenAI({ apiKey: batchKey, baseURL: `${instances[0]!.origin}/v1`, maxRetries: 0 });
    const lines = Array.from({ length: 60 }, (_, index) =>
      JSON.stringify({
        custom_id: `line-${index}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'priced', max_tokens: 40, messages: [{ role: 'user', content: `Line ${index}: a short answer, please.` }] },
      }),
    ).join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(lines), 'lines.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await until(
      async () => {
        const current = await client.batches.retrieve(batch.id);
        return current.status === 'completed' || current.status === 'failed' ? current : undefined;
      },
      'the batch to complete',
      180_000,
      500,
    );
    assert.equal(done.status, 'completed');
    const completed = done.request_counts!.completed;
    const failed = done.request_counts!.failed;
    assert.equal(completed + failed, 60);
    assert.ok(completed > 0 && failed > 0, `${completed} completed, ${failed} failed`);
    const errors = (await (await client.files.content(done.error_file_id!)).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(errors.length, failed);
    assert.ok(errors.every((line: any) => line.response.body.error.code === 'budget_exceeded'));
    const written = await until(async () => {
      const now = await ledger(batchOrganization);
      return now.rows >= completed ? now : undefined;
    }, 'the batch ledger rows');
    assert.ok(written.total <= 20_000, `the batch spent ${written.total} of 20000 micro-USD`);
  });
});
