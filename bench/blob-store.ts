/**
 * Blob store throughput and memory: a 100 MiB file of random bytes uploaded (streamed from disk with
 * `put`) and downloaded (`get`, streamed to a sink) through each backend. Postgres uses a fresh
 * database on BENCH_DATABASE_URL or TEST_DATABASE_URL (skipped without); S3 runs against s3rver (a real
 * S3 wire server, in its own process, writing to the local disk).
 * Targets: peak RSS under 200 MB; postgres and S3 at least half the local-disk throughput.
 *
 * What makes the comparison fair:
 * - Each measurement is a fresh child process that imports only the code of the backend it measures
 *   (not the other backends' SDKs, the migrations or s3rver), so its memory is its own.
 * - The store is warmed up first with a 1 MiB round trip (pool connections, code the SDK loads on first
 *   use): a running service has those already, and they are not the cost of moving a file.
 * - RSS "start" is taken after the warm-up; "peak" is the kernel's high-water mark for the whole process
 *   (it can only over-report); "growth" is the difference: what the transfer cost, garbage not yet
 *   collected included (the file copy row shows how much of it any 100 MiB stream leaves).
 * - The backends take turns, round after round (BENCH_ROUNDS); medians are shown with the range, and
 *   "vs local" is the median of ratios taken within a round, so background load hits both sides alike.
 * - Two baselines of the same run: "file copy" (a plain stream copy of the file, no fsync) and "s3rver
 *   raw" (one plain HTTP PUT and GET of the file to s3rver: no SDK, no multipart): the ceiling of the S3
 *   test server itself, which no client setting can beat.
 *
 * Run: node --import tsx bench/blob-store.ts
 *   BENCH_MB=100  BENCH_ROUNDS=3  BENCH_PG_CHUNK_KB=1024  BENCH_PG_READ=4  BENCH_PG_WRITES=2
 *   BENCH_S3_PART_MB=5  BENCH_S3_QUEUE=4
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../src/files/blob-store.ts';

const MEGABYTES = Number(process.env['BENCH_MB'] ?? 100);
const BYTES = MEGABYTES * 1024 * 1024;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

type Backend = 'file copy' | 'local' | 'postgres' | 's3rver raw' | 's3';

interface Measurement {
  backend: Backend;
  uploadMBps: number;
  downloadMBps: number;
  /** Resident set size after the warm-up, before the transfers, MB. */
  startRssMB: number;
  /** The process's highest resident set size, MB. */
  peakRssMB: number;
}

/** A sink that counts and drops bytes, so downloads measure the store and not a second disk write. */
function countingSink(): { sink: Writable; bytes: () => number } {
  let bytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback();
    },
  });
  return { sink, bytes: () => bytes };
}

/** A number from the environment, or undefined when unset. */
function setting(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : Number(value);
}

/** The store under test; dynamic imports, so that a worker loads its own backend's code only. */
async function openStore(backend: Backend, directory: string): Promise<BlobStore | undefined> {
  if (backend === 'local') {
    const { LocalDiskBlobStore } = await import('../src/files/local-disk/local-disk-blob-store.ts');
    return new LocalDiskBlobStore(join(directory, 'files'));
  }
  if (backend === 'postgres') {
    const { PostgresBlobStore } = await import('../src/files/postgres/postgres-blob-store.ts');
    const chunkKb = setting('BENCH_PG_CHUNK_KB');
    const chunksPerRead = setting('BENCH_PG_READ');
    const writesInFlight = setting('BENCH_PG_WRITES');
    return new PostgresBlobStore({
      connectionString: process.env['BENCH_PG_URL']!,
      ...(chunkKb === undefined ? {} : { chunkBytes: chunkKb * 1024 }),
      ...(chunksPerRead === undefined ? {} : { chunksPerRead }),
      ...(writesInFlight === undefined ? {} : { writesInFlight }),
    });
  }
  if (backend === 's3') {
    const { S3BlobStore } = await import('../src/files/s3/s3-blob-store.ts');
    const partMb = setting('BENCH_S3_PART_MB');
    const partsInFlight = setting('BENCH_S3_QUEUE');
    return new S3BlobStore({
      bucket: 'bench',
      prefix: 'blobs',
      endpoint: process.env['BENCH_S3_ENDPOINT']!,
      region: 'us-east-1',
      credentials: JSON.parse(process.env['BENCH_S3_CREDENTIALS']!) as { accessKeyId: string; secretAccessKey: string },
      ...(partMb === undefined ? {} : { partBytes: partMb * 1024 * 1024 }),
      ...(partsInFlight === undefined ? {} : { partsInFlight }),
    });
  }
  return undefined;
}

/** One plain HTTP request to s3rver (it accepts anonymous requests): the server's own ceiling. */
async function s3rverRaw(method: 'PUT' | 'GET', source: string, sink: Writable): Promise<void> {
  const url = `${process.env['BENCH_S3_ENDPOINT']!}/bench/raw-blob`;
  const answered = new Promise<void>((resolve, reject) => {
    const outgoing = request(url, { method, headers: method === 'PUT' ? { 'content-length': BYTES } : {} }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`s3rver answered ${response.statusCode} to ${method}`));
      pipeline(response, method === 'GET' ? sink : countingSink().sink).then(resolve, reject);
    });
    outgoing.once('error', reject);
    if (method === 'PUT') pipeline(createReadStream(source), outgoing).catch(reject);
    else outgoing.end();
  });
  await answered;
}

/** Child process: one backend, one upload, one download; prints the measurement as JSON. */
async function measure(backend: Backend, source: string, directory: string): Promise<Measurement> {
  const store = await openStore(backend, directory);
  if (store !== undefined) {
    await store.put('bench-warm-up', [randomBytes(1024 * 1024)]);
    await pipeline((await store.get('bench-warm-up'))!, countingSink().sink);
    await store.delete('bench-warm-up');
  }
  const startRssMB = process.memoryUsage().rss / 1e6;
  const copy = join(directory, 'copy.bin');
  let started = performance.now();
  if (backend === 's3rver raw') await s3rverRaw('PUT', source, countingSink().sink);
  else if (store === undefined) await pipeline(createReadStream(source), createWriteStream(copy));
  else if ((await store.put('bench-blob', createReadStream(source))) !== BYTES) throw new Error('short upload');
  const uploadSeconds = (performance.now() - started) / 1000;
  const { sink, bytes } = countingSink();
  started = performance.now();
  if (backend === 's3rver raw') await s3rverRaw('GET', source, sink);
  else await pipeline(store === undefined ? createReadStream(copy) : (await store.get('bench-blob'))!, sink);
  const downloadSeconds = (performance.now() - started) / 1000;
  if (bytes() !== BYTES) throw new Error(`short download: ${bytes()} bytes`);
  await store?.delete('bench-blob');
  await store?.close();
  return {
    backend,
    uploadMBps: BYTES / 1e6 / uploadSeconds,
    downloadMBps: BYTES / 1e6 / downloadSeconds,
    startRssMB,
    peakRssMB: (process.resourceUsage().maxRSS * 1024) / 1e6,
  };
}

async function runWorker(backend: Backend, source: string, env: NodeJS.ProcessEnv): Promise<Measurement> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-bench-blob-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/blob-store.ts', '--worker', backend, source, directory], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`${backend} worker exited with ${code}: ${output}`);
    return JSON.parse(output.trim().split('\n').at(-1)!) as Measurement;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** `median [min-max]` of a throughput, or just the value for one round. */
function spread(values: number[]): string {
  const shown = median(values).toFixed(0);
  return values.length === 1 ? shown : `${shown} [${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}]`;
}

async function main(): Promise<void> {
  // Imported here, not at the top: the workers must not load s3rver, the migrations or pg.
  const { openDatabase } = await import('../src/db/database.ts');
  const { createPostgresTestDatabase } = await import('../test/support/databases.ts');
  const { S3_TEST_CREDENTIALS } = await import('../test/support/s3-server.ts');
  const { startProcess } = await import('./support/processes.ts');

  const workspace = mkdtempSync(join(tmpdir(), 'switchyard-bench-blobs-'));
  const source = join(workspace, 'source.bin');
  const s3 = await startProcess('test/support/s3-server-main.ts', ['bench'], {}, /s3 endpoint (\S+)/);
  const database = await createPostgresTestDatabase();
  try {
    const out = createWriteStream(source);
    for (let written = 0; written < BYTES; written += 1024 * 1024) {
      if (!out.write(randomBytes(1024 * 1024))) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve) => out.end(() => resolve()));
    if (database !== undefined) {
      const migrating = openDatabase(database.url);
      await migrating.migrate();
      await migrating.close();
    } else {
      console.warn('\n*** SKIPPED: postgres backend (set BENCH_DATABASE_URL or TEST_DATABASE_URL=postgres://127.0.0.1:5432/test) ***\n');
    }
    const env = {
      BENCH_S3_ENDPOINT: s3.match[1]!,
      BENCH_S3_CREDENTIALS: JSON.stringify(S3_TEST_CREDENTIALS),
      ...(database === undefined ? {} : { BENCH_PG_URL: database.url }),
    };
    const backends: Backend[] = ['file copy', 'local', ...(database === undefined ? [] : (['postgres'] as const)), 's3rver raw', 's3'];
    const loadBefore = loadavg()[0]!;
    const rounds: Measurement[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results: Measurement[] = [];
      for (const backend of backends) results.push(await runWorker(backend, source, env));
      rounds.push(results);
    }

    console.log(
      `blob store benchmark: ${MEGABYTES} MiB of random bytes, ${ROUNDS} round(s), one fresh process per backend and round, node ${process.version}`,
    );
    console.log(
      `${availableParallelism()} CPUs, load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after the run`,
    );
    console.log(
      'throughput: median [min-max] of the rounds; RSS: median start, highest peak, largest growth (peak - start in one process)',
    );
    console.log('backend     upload MB/s      download MB/s    vs local (up/down)  RSS start  peak  growth MB');
    for (const [index, backend] of backends.entries()) {
      const runs = rounds.map((results) => results[index]!);
      const locals = rounds.map((results) => results.find((result) => result.backend === 'local')!);
      const upRatio = median(runs.map((run, round) => run.uploadMBps / locals[round]!.uploadMBps));
      const downRatio = median(runs.map((run, round) => run.downloadMBps / locals[round]!.downloadMBps));
      const startRss = median(runs.map((run) => run.startRssMB));
      const peakRss = Math.max(...runs.map((run) => run.peakRssMB));
      const growth = Math.max(...runs.map((run) => run.peakRssMB - run.startRssMB));
      console.log(
        `${backend.padEnd(10)}  ${spread(runs.map((run) => run.uploadMBps)).padEnd(15)}  ${spread(runs.map((run) => run.downloadMBps)).padEnd(15)}  ${`${upRatio.toFixed(2)} / ${downRatio.toFixed(2)}`.padStart(18)}  ${startRss.toFixed(0).padStart(9)}  ${peakRss.toFixed(0).padStart(4)}  ${growth.toFixed(0).padStart(9)}`,
      );
    }
    console.log('targets: peak RSS < 200 MB; postgres and s3 >= 0.5 of local');
    console.log('(s3rver raw = one plain HTTP PUT/GET to s3rver, a Node process writing to this disk: the ceiling for s3 here)');
  } finally {
    await s3.stop();
    await database?.drop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--worker') {
  const measurement = await measure(process.argv[3] as Backend, process.argv[4]!, process.argv[5]!);
  process.stdout.write(`${JSON.stringify(measurement)}\n`);
  process.exit(0);
} else {
  await main();
}
