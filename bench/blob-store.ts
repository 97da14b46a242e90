/**
 * Blob store throughput and memory: a 100 MiB file of random bytes uploaded (streamed from disk with
 * `put`) and downloaded (`get`, streamed to a sink) through each backend, beside a plain file copy
 * measured in the same run. Each backend runs in its own child process so that its peak RSS is its
 * own. Postgres uses a fresh database on BENCH_DATABASE_URL or TEST_DATABASE_URL (skipped without);
 * S3 runs against s3rver (a real S3 wire server, in its own process, writing to the local disk).
 * Targets: peak RSS under 200 MB; postgres and S3 at least half the local-disk throughput.
 *
 * Run: node --import tsx bench/blob-store.ts      (BENCH_MB=100, BENCH_PG_CHUNK_KB=1024 to change)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openDatabase } from '../src/db/database.ts';
import type { BlobStore } from '../src/files/blob-store.ts';
import { LocalDiskBlobStore } from '../src/files/local-disk/local-disk-blob-store.ts';
import { PostgresBlobStore } from '../src/files/postgres/postgres-blob-store.ts';
import { S3BlobStore } from '../src/files/s3/s3-blob-store.ts';
import { createPostgresTestDatabase } from '../test/support/databases.ts';
import { S3_TEST_CREDENTIALS } from '../test/support/s3-server.ts';
import { startProcess } from './support/processes.ts';

const MEGABYTES = Number(process.env['BENCH_MB'] ?? 100);
const BYTES = MEGABYTES * 1024 * 1024;

type Backend = 'file copy' | 'local' | 'postgres' | 's3';

interface Measurement {
  backend: Backend;
  uploadMBps: number;
  downloadMBps: number;
  /** Resident set size before the transfers and at its peak, MB. */
  startRssMB: number;
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

function storeFor(backend: Backend, directory: string): BlobStore | undefined {
  if (backend === 'local') return new LocalDiskBlobStore(join(directory, 'files'));
  if (backend === 'postgres') {
    const chunkKb = process.env['BENCH_PG_CHUNK_KB'];
    return new PostgresBlobStore({
      connectionString: process.env['BENCH_PG_URL']!,
      ...(chunkKb === undefined ? {} : { chunkBytes: Number(chunkKb) * 1024 }),
    });
  }
  if (backend === 's3') {
    return new S3BlobStore({
      bucket: 'bench',
      prefix: 'blobs',
      endpoint: process.env['BENCH_S3_ENDPOINT']!,
      region: 'us-east-1',
      credentials: S3_TEST_CREDENTIALS,
    });
  }
  return undefined;
}

/** Child process: one backend, one upload, one download; prints the measurement as JSON. */
async function measure(backend: Backend, source: string, directory: string): Promise<Measurement> {
  const startRssMB = process.memoryUsage().rss / 1e6;
  const store = storeFor(backend, directory);
  const copy = join(directory, 'copy.bin');
  let started = performance.now();
  if (store === undefined) await pipeline(createReadStream(source), createWriteStream(copy));
  else if ((await store.put('bench-blob', createReadStream(source))) !== BYTES) throw new Error('short upload');
  const uploadSeconds = (performance.now() - started) / 1000;
  const { sink, bytes } = countingSink();
  started = performance.now();
  await pipeline(store === undefined ? createReadStream(copy) : (await store.get('bench-blob'))!, sink);
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

if (process.argv[2] === '--worker') {
  const measurement = await measure(process.argv[3] as Backend, process.argv[4]!, process.argv[5]!);
  process.stdout.write(`${JSON.stringify(measurement)}\n`);
  process.exit(0);
}

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
  const env = { BENCH_S3_ENDPOINT: s3.match[1]!, ...(database === undefined ? {} : { BENCH_PG_URL: database.url }) };
  const backends: Backend[] = ['file copy', 'local', ...(database === undefined ? [] : (['postgres'] as const)), 's3'];
  const results: Measurement[] = [];
  for (const backend of backends) results.push(await runWorker(backend, source, env));

  const local = results.find((result) => result.backend === 'local')!;
  console.log(`blob store benchmark: ${MEGABYTES} MiB of random bytes, one process per backend, node ${process.version}`);
  console.log('backend     upload MB/s  download MB/s  vs local (up/down)  RSS start -> peak MB');
  for (const result of results) {
    const ratio = `${(result.uploadMBps / local.uploadMBps).toFixed(2)} / ${(result.downloadMBps / local.downloadMBps).toFixed(2)}`;
    console.log(
      `${result.backend.padEnd(10)}  ${result.uploadMBps.toFixed(0).padStart(11)}  ${result.downloadMBps.toFixed(0).padStart(13)}  ${ratio.padStart(18)}  ${result.startRssMB.toFixed(0).padStart(9)} -> ${result.peakRssMB.toFixed(0)}`,
    );
  }
  console.log('targets: peak RSS < 200 MB; postgres and s3 >= 0.5 of local (s3rver is itself a Node process writing to this disk)');
} finally {
  await s3.stop();
  await database?.drop();
  rmSync(workspace, { recursive: true, force: true });
}
