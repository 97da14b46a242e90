// Three `switchyard serve` processes, each with its own DATA_DIR, sharing one fresh Postgres database
// and one Redis, as an operator runs them behind a load balancer; once with FILES_STORE=postgres and
// once with an S3 store (s3rver, a real S3 wire server). Any instance serves what another stored:
// file content, deletion, generated image links. A simultaneous first start creates one key; a
// 2,000-line batch spread over all three survives SIGKILL of one of them, with mixed interactive
// traffic throughout, and the ledger then holds exactly one row per request served; /readyz reports it
// on every instance when Redis goes away. Needs TEST_DATABASE_URL and a
// `redis-server` binary (this suite starts and stops its OWN Redis on a free port); skipped LOUDLY
// otherwise.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { LatencyUpstream, slowModelBatchInput } from '../batches/support/latency-upstream.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { S3_TEST_CREDENTIALS, startS3Server, type S3TestServer } from '../support/s3-server.ts';
import { freePort } from '../support/free-port.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { until } from '../support/until.ts';

const INSTANCES = 3;
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
const runnable = Boolean(process.env['TEST_DATABASE_URL']) && Boolean(process.env['TEST_REDIS_URL']) && hasRedisServer;
if (!runnable) {
  console.warn(
    '\n*** SKIPPED: multi-instance suite (needs TEST_DATABASE_URL=postgres://127.0.0.1:5432/test, TEST_REDIS_URL and a redis-server binary on PATH) ***\n',
  );
}

/** A private redis-server (no persistence) this suite may stop without touching anyone else's. */
async function startOwnRedis(): Promise<{ url: string; process: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let attempt = 0; attempt < 100; attempt++) {
    const ping = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
    if (ping.stdout.trim() === 'PONG') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** SIGTERM, then SIGKILL if the process has not exited within 15 s. */
async function stopInstance(instance: ServerProcess): Promise<void> {
  const exited = instance.stop();
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

for (const store of runnable ? (['postgres', 's3'] as const) : []) {
  describe(`${INSTANCES} instances, FILES_STORE=${store}`, () => {
    let database: TestDatabase;
    let redis: Awaited<ReturnType<typeof startOwnRedis>>;
    let s3: S3TestServer | undefined;
    const dataDirs: string[] = [];
    let instances: ServerProcess[] = [];
    let instanceEnvs: NodeJS.ProcessEnv[] = [];
    let key = '';
    // Batch lines and part of the interactive traffic go to an upstream with a fixed latency, so that a
    // batch runs long enough to be killed mid-run.
    const upstream = new LatencyUpstream(200);
    let configDirectory = '';

    before(async () => {
      const created = await createPostgresTestDatabase();
      assert.ok(created !== undefined);
      database = created;
      redis = await startOwnRedis();
      let storeEnv: Record<string, string> = { FILES_STORE: 'postgres' };
      if (store === 's3') {
        s3 = await startS3Server(['switchyard-files']);
        storeEnv = { FILES_STORE: 's3://switchyard-files/instances', ...s3.env() };
      }
      await upstream.start();
      configDirectory = mkdtempSync(join(tmpdir(), 'switchyard-instances-config-'));
      const configFile = join(configDirectory, 'config.json');
      writeFileSync(
        configFile,
        JSON.stringify({
          providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
          models: [{ id: 'slow-model', provider: 'up', capabilities: ['chat'] }],
        }),
      );
      // Short leases: the killed instance's chunks go to the others 3 s after it dies.
      const batchEnv = { SWITCHYARD_CONFIG: configFile, BATCH_LEASE_MS: '3000', BATCH_CONCURRENCY: '8' };
      // All three start at once on the empty database: migrations and the first-start key race.
      const ports = [await freePort(), await freePort(), await freePort()];
      instanceEnvs = ports.map(() => {
        const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-instance-'));
        dataDirs.push(dataDir);
        // `info` (without access lines) for the "switchyard listening" line, logged once the first start is done.
        const logEnv = { LOG_LEVEL: 'info', LOG_ACCESS: 'off' };
        return { DATA_DIR: dataDir, DATABASE_URL: database.url, REDIS_URL: redis.url, ...storeEnv, ...batchEnv, ...logEnv };
      });
      instances = await Promise.all(ports.map((port, index) => startServerProcess(instanceEnvs[index]!, port)));
    });

    after(async () => {
      await Promise.all(instances.map((instance) => stopInstance(instance)));
      await redis.stop();
      await s3?.close();
      await upstream.close();
      await database.drop();
      for (const dataDir of [...dataDirs, configDirectory]) rmSync(dataDir, { recursive: true, force: true });
    });

    test('a simultaneous first start prints exactly one key, and it is the only key', async () => {
      // /healthz answers once the listener is up; the first-start key is created and printed after that.
      await until(
        async () => (instances.every((instance) => instance.output().includes('switchyard listening')) ? true : undefined),
        'every instance past its first start',
      );
      const printed = instances
        .map((instance) => /First start: created an API key[^\n]*\n\n\s+(sk-\S+)/.exec(instance.output())?.[1])
        .filter((found) => found !== undefined);
      assert.equal(printed.length, 1, instances.map((instance) => instance.output()).join('\n---\n'));
      key = printed[0]!;
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        assert.equal((await client.query('SELECT id FROM api_keys')).rowCount, 1);
      } finally {
        await client.end();
      }
    });

    test('a file uploaded through one instance is read, downloaded and deleted through the others', async () => {
      const [first, second, third] = instances as [ServerProcess, ServerProcess, ServerProcess];
      const auth = { authorization: `Bearer ${key}` };
      const content =
        Array.from({ length: 2000 }, (_, index) => JSON.stringify({ custom_id: `line-${index}`, payload: 'x'.repeat(200) })).join('\n') +
        '\n';
      const form = new FormData();
      form.append('purpose', 'user_data');
      form.append('file', new Blob([content], { type: 'application/jsonl' }), 'shared.jsonl');
      const uploaded = await fetch(`${first.origin}/v1/files`, { method: 'POST', headers: auth, body: form });
      assert.equal(uploaded.status, 200, await uploaded.clone().text());
      const file = (await uploaded.json()) as { id: string; bytes: number };
      assert.equal(file.bytes, Buffer.byteLength(content));

      const retrieved = await fetch(`${second.origin}/v1/files/${file.id}`, { headers: auth });
      assert.equal(retrieved.status, 200);
      const downloaded = await fetch(`${third.origin}/v1/files/${file.id}/content`, { headers: auth });
      assert.equal(downloaded.status, 200);
      assert.equal(await downloaded.text(), content);

      const deleted = await fetch(`${second.origin}/v1/files/${file.id}`, { method: 'DELETE', headers: auth });
      assert.equal(deleted.status, 200);
      for (const instance of instances) {
        assert.equal((await fetch(`${instance.origin}/v1/files/${file.id}/content`, { headers: auth })).status, 404);
      }
      // The bytes are gone from the shared store, not only hidden.
      if (store === 'postgres') {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          assert.equal((await client.query('SELECT key FROM blob_objects WHERE key = $1', [file.id])).rowCount, 0);
          assert.equal((await client.query('SELECT upload_id FROM blob_chunks')).rowCount, 0);
        } finally {
          await client.end();
        }
      } else {
        const s3Client = new S3Client({
          region: 'us-east-1',
          endpoint: s3!.endpoint,
          forcePathStyle: true,
          credentials: S3_TEST_CREDENTIALS,
        });
        const listed = await s3Client.send(new ListObjectsV2Command({ Bucket: 'switchyard-files', Prefix: 'instances/' }));
        s3Client.destroy();
        assert.deepEqual(
          (listed.Contents ?? []).map((object) => object.Key),
          [],
        );
      }
    });

    test('an image link made by one instance is served by every instance', async () => {
      const generated = await fetch(`${instances[2]!.origin}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'switchyard-images', prompt: 'three lighthouses', size: '256x256', response_format: 'url' }),
      });
      assert.equal(generated.status, 200, await generated.clone().text());
      const link = new URL(((await generated.json()) as { data: Array<{ url: string }> }).data[0]!.url);
      for (const instance of instances) {
        const image = await fetch(`${instance.origin}${link.pathname}${link.search}`);
        assert.equal(image.status, 200, instance.origin);
        assert.equal(image.headers.get('content-type'), 'image/png');
        assert.ok((await image.arrayBuffer()).byteLength > 100);
      }
    });

    test('a 2,000-line batch survives SIGKILL of one instance amid mixed traffic; the ledger holds one row per request served', async () => {
      const LINES = 2000;
      const clients = instances.map((instance) => new OpenAI({ apiKey: key, baseURL: `${instance.origin}/v1`, maxRetries: 0 }));
      const input = slowModelBatchInput(LINES, 'line');
      const file = await clients[0]!.files.create({ file: await toFile(Buffer.from(input), 'lines.jsonl'), purpose: 'batch' });
      const batch = await clients[1]!.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });

      // Interactive traffic on every instance while the batch runs: one request in flight per instance,
      // a streamed built-in answer and an upstream JSON answer in turn. Request ids served, per instance.
      const served: string[][] = instances.map(() => []);
      const sending = instances.map(() => true);
      const traffic = instances.map(async (instance, index) => {
        for (let turn = 0; sending[index]; turn++) {
          const stream = turn % 2 === 0;
          const answer = await fetch(`${instance.origin}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: stream ? 'switchyard-echo' : 'slow-model',
              stream,
              max_tokens: 16,
              messages: [{ role: 'user', content: `interactive ${index}-${turn}` }],
            }),
          }).catch(() => undefined);
          if (answer === undefined) continue;
          const body = await answer.text();
          if (answer.status === 200 && (!stream || body.includes('[DONE]'))) served[index]!.push(answer.headers.get('x-request-id')!);
          // About 2 requests per second per instance: well inside the key's 600 requests per minute.
          await new Promise((resolve) => setTimeout(resolve, 400));
        }
      });

      const victim = 0;
      // However the run ends, the traffic loops stop: a failed wait must fail the test, not leave it running.
      let done: Awaited<ReturnType<(typeof clients)[1]['batches']['retrieve']>>;
      try {
        await until(
          async () => ((await clients[2]!.batches.retrieve(batch.id)).request_counts!.completed >= 200 ? true : undefined),
          'the batch to be under way',
        );
        // The victim gets no interactive traffic for longer than the ledger's flush interval (1 s) before
        // it dies, so its documented crash window holds nothing and every served request must be billed.
        sending[victim] = false;
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const progressAtKill = (await clients[2]!.batches.retrieve(batch.id)).request_counts!.completed;
        assert.ok(progressAtKill < LINES, 'the batch is still running when the instance is killed');
        const exited = new Promise((resolve) => instances[victim]!.child.once('exit', resolve));
        instances[victim]!.child.kill('SIGKILL');
        await exited;

        // Its bound only stops a broken run from hanging: alone the whole test takes ~30 s, but the suite runs two
        // files at once on two cores, and one CI run under extra load did not finish it within the default 45 s.
        done = await until(
          async () => {
            const current = await clients[1]!.batches.retrieve(batch.id);
            return current.status === 'completed' ? current : undefined;
          },
          'the batch to complete on the surviving instances',
          120_000,
        );
      } finally {
        sending.fill(false);
        await Promise.all(traffic);
      }

      const readLines = async (
        fileId: string | null | undefined,
      ): Promise<Array<{ custom_id: string; response?: { request_id: string } }>> =>
        fileId === null || fileId === undefined
          ? []
          : (await (await clients[2]!.files.content(fileId)).text())
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => JSON.parse(line) as { custom_id: string; response?: { request_id: string } });
      const output = await readLines(done.output_file_id);
      const errors = await readLines(done.error_file_id);
      const ids = [...output, ...errors].map((line) => line.custom_id);
      assert.equal(ids.length, LINES, 'every line appears once');
      assert.equal(new Set(ids).size, LINES, 'no custom_id twice');
      assert.equal(output.length, done.request_counts!.completed);

      const interactive = served.flat();
      assert.ok(
        served.every((ids) => ids.length > 0),
        'every instance served interactive requests',
      );
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        // The survivors flush their ledgers every second: wait until every served request is there.
        const rows = await until(
          async () => {
            const result = await client.query<{ request_id: string; batch: number }>(
              "SELECT request_id, batch FROM usage_ledger WHERE model IN ('slow-model', 'switchyard-echo')",
            );
            return result.rows.length >= output.length + interactive.length ? result.rows : undefined;
          },
          'the ledger rows of every served request',
          15_000,
        );
        const batchRows = rows.filter((row) => Number(row.batch) === 1).map((row) => row.request_id);
        const interactiveRows = rows.filter((row) => Number(row.batch) === 0).map((row) => row.request_id);
        assert.equal(batchRows.length, output.length, 'one ledger row per completed line');
        assert.deepEqual(new Set(batchRows), new Set(output.map((line) => line.response!.request_id)));
        assert.equal(interactiveRows.length, interactive.length, 'one ledger row per interactive request served');
        assert.deepEqual(new Set(interactiveRows), new Set(interactive));
      } finally {
        await client.end();
      }

      // The killed instance comes back with its own data directory (so its own instance id).
      instances[victim] = await startServerProcess(instanceEnvs[victim]!, await freePort());
    });

    test('/readyz is 200 everywhere, and still 200 (`degraded`, naming redis) on every instance once Redis stops', async () => {
      for (const instance of instances) {
        const ready = await fetch(`${instance.origin}/readyz`);
        assert.equal(ready.status, 200, await ready.clone().text());
        const body = (await ready.json()) as { checks: Record<string, { ok: boolean }> };
        assert.deepEqual(Object.keys(body.checks).sort(), ['database', 'files', 'keys', 'redis']);
      }
      await redis.stop();
      for (const instance of instances) {
        const answer = await fetch(`${instance.origin}/readyz`);
        // A fault every instance shares does not take them all out of the balancer (README "When a dependency fails").
        assert.equal(answer.status, 200);
        const body = (await answer.json()) as { status: string; degraded: string[] };
        assert.equal(body.status, 'degraded');
        assert.deepEqual(body.degraded, ['redis']);
      }
    });
  });
}
