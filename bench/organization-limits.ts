/**
 * What the organization limits add (issue 37 item 5): uploads through the file service with the storage
 * quota's reservations (one database transaction per 1 MiB step) against the same uploads without a
 * quota, and key creation under the cap (count and insert under the organization's lock) against
 * creation without one; SQLite as served, and Postgres when TEST_DATABASE_URL is set (a fresh database).
 * Wall time of the whole loop, local-disk blobs. Figures are printed, never asserted.
 *
 * Run: node --import tsx bench/organization-limits.ts [uploads, default 20] [MiB each, default 8] [keys, default 200]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { ApiKeysRepository } from '../src/db/repositories/api-keys-repository.ts';
import { FilesRepository } from '../src/db/repositories/files-repository.ts';
import { StorageQuotaRepository } from '../src/db/repositories/storage-quota-repository.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { randomHex } from '../src/core/ids.ts';
import { LocalDiskBlobStore } from '../src/files/local-disk/local-disk-blob-store.ts';
import { systemClock } from '../src/limits/clock.ts';
import { FileService, type UploadPart } from '../src/services/files/file-service.ts';
import { StorageQuota } from '../src/services/files/storage-quota.ts';

const UPLOADS = Number(process.argv[2] ?? 20);
const MIB_EACH = Number(process.argv[3] ?? 8);
const KEYS = Number(process.argv[4] ?? 200);
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

async function* parts(): AsyncGenerator<UploadPart> {
  const chunks = (MIB_EACH * 1024 * 1024) / CHUNK.length;
  yield { kind: 'field', name: 'purpose', value: 'user_data' };
  yield {
    kind: 'file',
    name: 'file',
    filename: 'bench.bin',
    mediaType: 'application/octet-stream',
    content: Readable.from(Array.from({ length: chunks }, () => CHUNK)),
    isTruncated: () => false,
  };
}

async function uploads(database: Database, blobs: string, quota: boolean): Promise<number> {
  const storage = quota
    ? new StorageQuota(new StorageQuotaRepository(database.db), { quotaBytes: async () => 1024 ** 4 }, systemClock)
    : undefined;
  const files = new FileService({
    repository: new FilesRepository(database.db),
    store: new LocalDiskBlobStore(blobs),
    ...(storage === undefined ? {} : { storage }),
  });
  await files.start();
  const started = performance.now();
  for (let index = 0; index < UPLOADS; index++) await files.upload(quota ? 'org-quota' : 'org-free', parts(), 1024 ** 3);
  return performance.now() - started;
}

async function keys(database: Database, capped: boolean): Promise<number> {
  const repository = new ApiKeysRepository(database.db);
  const organization = capped ? 'org-capped' : 'org-uncapped';
  const started = performance.now();
  for (let index = 0; index < KEYS; index++) {
    const key = {
      id: `key_${randomHex(8)}`,
      organizationId: organization,
      keyHash: randomHex(32),
      redacted: 'sk-sy-...bench',
      name: null,
      tier: 'Developer',
      permissions: ['models'],
      createdAt: Date.now(),
      expiresAt: null,
    };
    if (capped) await repository.create(key, { maxActive: KEYS + 1, now: Date.now() });
    else await repository.create(key);
  }
  return performance.now() - started;
}

async function run(name: string, url: string): Promise<void> {
  const database = openDatabase(url);
  await database.migrate();
  const blobs = mkdtempSync(join(tmpdir(), 'switchyard-bench-blobs-'));
  try {
    // Alternate the order so neither side always runs warm.
    const without1 = await uploads(database, blobs, false);
    const with1 = await uploads(database, blobs, true);
    const with2 = await uploads(database, blobs, true);
    const without2 = await uploads(database, blobs, false);
    const megabytes = UPLOADS * MIB_EACH;
    const perMiB = (ms: number) => ((ms / 2 / megabytes) * 1000).toFixed(0);
    console.log(
      `${name} uploads: ${UPLOADS} x ${MIB_EACH} MiB; without quota ${perMiB(without1 + without2)} µs/MiB, with quota ${perMiB(with1 + with2)} µs/MiB`,
    );
    const quotaRepository = new StorageQuotaRepository(database.db);
    const steps = 200;
    const stepsStarted = performance.now();
    for (let index = 0; index < steps; index++)
      await quotaRepository.reserve({
        reservationId: `file-bench-${index % 10}`,
        organizationId: 'org-steps',
        bytes: 1024 * 1024,
        limitBytes: 1024 ** 5,
        now: Date.now(),
        ttlMs: 60_000,
      });
    console.log(`${name} reservation steps: ${steps} in turn; ${(((performance.now() - stepsStarted) / steps) * 1000).toFixed(0)} µs each`);
    const uncapped = await keys(database, false);
    const capped = await keys(database, true);
    console.log(
      `${name} key creates: ${KEYS} in turn; without cap ${((uncapped / KEYS) * 1000).toFixed(0)} µs each, with cap ${((capped / KEYS) * 1000).toFixed(0)} µs each`,
    );
  } finally {
    await database.close();
    rmSync(blobs, { recursive: true, force: true });
  }
}

const directory = mkdtempSync(join(tmpdir(), 'switchyard-bench-db-'));
try {
  await run('sqlite', `sqlite:${join(directory, 'bench.db')}`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
const serverUrl = process.env['TEST_DATABASE_URL'];
if (serverUrl !== undefined && serverUrl !== '') {
  const name = `switchyard_bench_${randomHex(8)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    await run('postgres', url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
