/**
 * One large batch over several instances: the same batch (`lines` chat lines against an upstream with a
 * fixed 200 ms latency) run by 1 instance, then by 3 instances sharing one Postgres database (each a
 * separate `switchyard serve` process with its own instance id, one shared data directory for the
 * local-disk file store). Lines are claimed in chunks by every instance with free capacity, so the
 * wall time should shrink with the instance count. Prints wall time, lines per second and the
 * speed-up of 3 instances over 1, measured in the same run. Figures are printed, never asserted.
 *
 * Run: BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/batches-multi-instance.ts [lines]
 *      (TEST_DATABASE_URL works too; lines default 3000, e.g. 20000 for the figure;
 *       BENCH_BATCH_CONCURRENCY sets each instance's BATCH_CONCURRENCY, default 16)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { randomHex } from '../src/core/ids.ts';
import { LatencyUpstream, slowModelBatchInput } from '../test/batches/support/latency-upstream.ts';
import { runCli } from '../test/support/run-cli.ts';
import { startServerProcess, type ServerProcess } from '../test/support/server-process.ts';

const LINES = Number(process.argv[2] ?? 3000);
const LATENCY_MS = 200;
const CONCURRENCY = process.env['BENCH_BATCH_CONCURRENCY'] ?? '16';
const serverUrl = process.env['BENCH_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL'];
if (serverUrl === undefined || serverUrl === '') {
  console.error('Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a Postgres server, e.g. postgres://postgres@127.0.0.1:5432/test');
  process.exit(1);
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const upstream = await new LatencyUpstream(LATENCY_MS).start();
const directory = mkdtempSync(join(tmpdir(), 'switchyard-bench-multi-'));
const configFile = join(directory, 'config.json');
upstream.writeConfig(configFile);
const input = slowModelBatchInput(LINES, 'line');

/** Runs the batch on `instances` fresh server processes over a fresh database; returns the wall time in seconds. */
async function run(instances: number): Promise<number> {
  const name = `switchyard_bench_${randomHex(8)}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  const dataDir = join(directory, name);
  const env = {
    DATA_DIR: dataDir,
    SWITCHYARD_CONFIG: configFile,
    DATABASE_URL: url.toString(),
    BATCH_CONCURRENCY: CONCURRENCY,
    LOG_LEVEL: 'error',
  };
  const servers: ServerProcess[] = [];
  try {
    const migrated = await runCli(['migrate'], env);
    if (migrated.code !== 0) throw new Error(migrated.stderr);
    for (let index = 0; index < instances; index++) servers.push(await startServerProcess({ ...env, INSTANCE_ID: `bench-${index}` }));
    const created = await runCli(['keys', 'create', '--org', 'org-bench', '--create-org', '--tier', 'Enterprise', '--json'], env);
    if (created.code !== 0) throw new Error(created.stderr);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const client = new OpenAI({ apiKey: key, baseURL: `${servers[0]!.origin}/v1`, maxRetries: 0 });
    const file = await client.files.create({ file: await toFile(Buffer.from(input), 'input.jsonl'), purpose: 'batch' });
    const started = performance.now();
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    for (;;) {
      const current = await client.batches.retrieve(batch.id);
      if (current.status === 'completed') {
        if (current.request_counts?.completed !== LINES) console.warn(`  warning: ${current.request_counts?.failed} lines failed`);
        break;
      }
      if (current.status !== 'validating' && current.status !== 'in_progress' && current.status !== 'finalizing')
        throw new Error(`batch ended ${current.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return (performance.now() - started) / 1000;
  } finally {
    for (const server of servers) await server.stop();
    await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

try {
  console.log(`Batch of ${LINES} chat lines, upstream latency ${LATENCY_MS} ms, BATCH_CONCURRENCY=${CONCURRENCY} per instance, Postgres`);
  const one = await run(1);
  console.log(`  1 instance : ${one.toFixed(1)} s  (${(LINES / one).toFixed(0)} lines/s)`);
  const three = await run(3);
  console.log(`  3 instances: ${three.toFixed(1)} s  (${(LINES / three).toFixed(0)} lines/s)`);
  console.log(`  speed-up 3 vs 1: ${(one / three).toFixed(2)}x  (ideal 3.00x; upstream answered ${upstream.answered} requests)`);
} finally {
  await upstream.close();
  rmSync(directory, { recursive: true, force: true });
}
