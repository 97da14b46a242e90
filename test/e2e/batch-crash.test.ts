// Crash suite: the instance running a batch is killed with SIGKILL mid-run. On SQLite the single
// instance is restarted (same data directory, so the same instance id); on Postgres a second instance
// takes over. Either way the batch completes, the output and error files hold every custom_id exactly
// once, and the usage ledger holds exactly one row per completed line (the rows of the lines'
// request ids), because a line's ledger row commits with its outcome. Real server processes, a real
// upstream with fixed latency, real databases; progress is polled with bounds, never timed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { openDatabase } from '../../src/db/database.ts';
import { LatencyUpstream, slowModelBatchInput } from '../batches/support/latency-upstream.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { runCli } from '../support/run-cli.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { until } from '../support/until.ts';

const LINES = 600;

async function kill(server: ServerProcess): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

async function readLines(
  client: OpenAI,
  fileId: string | null | undefined,
): Promise<Array<{ custom_id: string; response: { request_id: string } | null }>> {
  if (fileId === null || fileId === undefined) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { custom_id: string; response: { request_id: string } | null });
}

interface Scenario {
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
}

/** Creates the batch through `first`, kills it once some lines are done, lets `resume()` finish, checks files and ledger. */
async function crashAndCheck(scenario: Scenario, first: ServerProcess, resume: () => Promise<ServerProcess>): Promise<void> {
  const created = await runCli(['keys', 'create', '--org', 'org-crash', '--create-org', '--json'], scenario.env);
  assert.equal(created.code, 0, created.stderr);
  const { key, id: keyId } = JSON.parse(created.stdout) as { key: string; id: string };
  const firstClient = new OpenAI({ apiKey: key, baseURL: `${first.origin}/v1`, maxRetries: 0 });
  const input = await firstClient.files.create({
    file: await toFile(Buffer.from(slowModelBatchInput(LINES, 'crash')), 'input.jsonl'),
    purpose: 'batch',
  });
  const batch = await firstClient.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await until(
    async () => ((await firstClient.batches.retrieve(batch.id)).request_counts!.completed >= 60 ? true : undefined),
    'some lines to complete',
  );
  await kill(first);

  const survivor = await resume();
  try {
    const client = new OpenAI({ apiKey: key, baseURL: `${survivor.origin}/v1`, maxRetries: 0 });
    const done = await until(async () => {
      const current = await client.batches.retrieve(batch.id);
      return current.status === 'completed' ? current : undefined;
    }, 'the batch to complete after the crash');
    assert.equal(done.request_counts?.total, LINES);
    const output = await readLines(client, done.output_file_id);
    const errors = await readLines(client, done.error_file_id);
    const ids = [...output, ...errors].map((line) => line.custom_id);
    assert.equal(ids.length, LINES, 'every line appears once');
    assert.equal(new Set(ids).size, LINES, 'no custom_id twice');
    assert.equal(output.length, done.request_counts?.completed);

    const database = openDatabase(scenario.databaseUrl);
    try {
      const rows = await database.db.selectFrom('usage_ledger').select(['request_id', 'batch']).where('key_id', '=', keyId).execute();
      assert.equal(rows.length, output.length, 'exactly one ledger row per completed line');
      assert.ok(rows.every((row) => Number(row.batch) === 1));
      assert.deepEqual(new Set(rows.map((row) => row.request_id)), new Set(output.map((line) => line.response!.request_id)));
    } finally {
      await database.close();
    }
  } finally {
    await survivor.stop();
  }
}

describe('batch crash suite (SIGKILL mid-batch)', () => {
  const upstream = new LatencyUpstream(100);
  let directory: string;
  let configFile: string;

  before(async () => {
    await upstream.start();
    directory = mkdtempSync(join(tmpdir(), 'switchyard-batch-crash-'));
    configFile = join(directory, 'config.json');
    upstream.writeConfig(configFile);
  });
  after(async () => {
    await upstream.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('SQLite, one instance restarted: it frees its own leases at start and resumes at once', async () => {
    const dataDir = join(directory, 'sqlite');
    // A 60 s lease: the batch can only complete within the bound below if the restarted instance
    // frees the leases it held before the kill instead of waiting for them to lapse.
    const env = { DATA_DIR: dataDir, SWITCHYARD_CONFIG: configFile, BATCH_LEASE_MS: '60000', BATCH_CONCURRENCY: '16' };
    const first = await startServerProcess(env);
    await crashAndCheck({ env, databaseUrl: `sqlite:${join(dataDir, 'switchyard.db')}` }, first, () => startServerProcess(env));
  });

  test("Postgres, two instances: the other one resumes the killed one's lines once their lease lapses", async (context) => {
    const database: TestDatabase | undefined = await createPostgresTestDatabase();
    if (database === undefined) {
      console.warn('\n*** SKIPPED: Postgres batch crash test (set TEST_DATABASE_URL=postgres://127.0.0.1:5432/test to run it) ***\n');
      context.skip('TEST_DATABASE_URL is not set');
      return;
    }
    try {
      // One data directory for both (the local-disk file store is then shared), one instance id each.
      const dataDir = join(directory, 'postgres');
      const shared = {
        DATA_DIR: dataDir,
        SWITCHYARD_CONFIG: configFile,
        DATABASE_URL: database.url,
        BATCH_LEASE_MS: '3000',
        BATCH_CONCURRENCY: '8',
      };
      const envA = { ...shared, INSTANCE_ID: 'instance-a' };
      const first = await startServerProcess(envA);
      const second = await startServerProcess({ ...shared, INSTANCE_ID: 'instance-b' });
      await crashAndCheck({ env: envA, databaseUrl: database.url }, first, async () => second);
    } finally {
      await database.drop();
    }
  });
});
