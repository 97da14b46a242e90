// Unauthenticated bearer tokens cannot grow the heap (issue 33's attack: 15 KB tokens were kept whole in
// the API-key negative cache, ~25 KB of heap each): a secret without the key format is refused before
// any cache or database lookup, and an unknown well-formed one is remembered by its SHA-256 only; the
// first requests of a key, however many at once, share one database read.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Authenticator } from '../../src/accounts/authenticator.ts';
import { generateKeySecret, hashKeySecret } from '../../src/accounts/api-key-secret.ts';
import { KeyService } from '../../src/accounts/key-service.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { ApiKeysRepository } from '../../src/db/repositories/api-keys-repository.ts';
import { createSqliteTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function heapUsedAfterGc(): number {
  for (let round = 0; round < 3; round++) collectGarbage();
  return process.memoryUsage().heapUsed;
}

describe('authenticator: format check before any lookup, negative cache of hashes', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let repository: ApiKeysRepository;
  const lookups: string[] = [];

  before(async () => {
    testDatabase = await createSqliteTestDatabase();
    database = openDatabase(testDatabase.url);
    await database.migrate();
    repository = new ApiKeysRepository(database.db);
    const findByHash = repository.findByHash.bind(repository);
    repository.findByHash = async (hash: string) => {
      lookups.push(hash);
      return findByHash(hash);
    };
  });
  after(async () => {
    await database.close();
    await testDatabase.drop();
  });

  test('malformed secrets never reach the database or the cache; unknown well-formed ones are cached as hashes', async () => {
    const authenticator = new Authenticator(repository);
    const config = loadConfig({ env: {}, overrides: { dataDir: '/nonexistent', logLevel: 'silent' } });
    const created = await new KeyService(config, repository).create({ name: 'real' });
    for (const malformed of ['x'.repeat(15_000), 'sk-sy-short', `${created.key}x`, created.key.replace('sk-sy-', 'sk-xx-')]) {
      assert.throws(() => authenticator.authenticateCached(malformed), { code: 'invalid_api_key' });
      await assert.rejects(authenticator.authenticate(malformed), { code: 'invalid_api_key' });
    }
    assert.equal(lookups.length, 0, 'no database lookup for a malformed secret');
    assert.equal(authenticator.unknownSecretsCached, 0);

    const unknown = generateKeySecret();
    assert.equal(authenticator.authenticateCached(unknown), undefined, 'not known yet: ask the database');
    await assert.rejects(authenticator.authenticate(unknown), { code: 'invalid_api_key' });
    await assert.rejects(authenticator.authenticate(unknown), { code: 'invalid_api_key' });
    assert.throws(() => authenticator.authenticateCached(unknown), { code: 'invalid_api_key' });
    assert.deepEqual(lookups, [hashKeySecret(unknown)], 'one lookup, then the negative cache answers');
    assert.equal(authenticator.unknownSecretsCached, 1);

    assert.equal((await authenticator.authenticate(created.key)).keyId, created.record.id, 'real keys still work');
    assert.equal(authenticator.authenticateCached(created.key)?.keyId, created.record.id);
  });

  test('the first requests of a key, hundreds at once: one database read for all of them', async () => {
    const authenticator = new Authenticator(repository);
    const config = loadConfig({ env: {}, overrides: { dataDir: '/nonexistent', logLevel: 'silent' } });
    const created = await new KeyService(config, repository).create({ name: 'herd' });
    const unknown = generateKeySecret();
    lookups.length = 0;
    const answers = await Promise.all(Array.from({ length: 300 }, () => authenticator.authenticate(created.key)));
    assert.ok(answers.every((auth) => auth.keyId === created.record.id));
    const refusals = await Promise.allSettled(Array.from({ length: 300 }, () => authenticator.authenticate(unknown)));
    assert.ok(
      refusals.every((refusal) => refusal.status === 'rejected' && (refusal.reason as { code?: string }).code === 'invalid_api_key'),
    );
    assert.deepEqual(lookups, [hashKeySecret(created.key), hashKeySecret(unknown)], 'one read per key, however many ask at once');
  });
});

describe('1,000 unauthenticated requests with 15 KB bearer tokens', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  const flood = async (count: number): Promise<void> => {
    const concurrency = 20;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          next += 1;
          const response = await fetch(`${server.baseUrl}/models`, {
            headers: { authorization: `Bearer ${randomBytes(7_500).toString('hex')}` },
          });
          assert.equal(response.status, 401);
          assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
        }
      }),
    );
  };

  test('leave the heap where it was (measured after a forced GC in the server process)', async () => {
    await flood(100); // warm up: JIT, sockets, the first allocation of every buffer on the path
    const before = heapUsedAfterGc();
    await flood(1_000);
    const after = heapUsedAfterGc();
    const grownMb = (after - before) / 1_048_576;
    console.log(
      `heapUsed before ${(before / 1_048_576).toFixed(1)} MB, after ${(after / 1_048_576).toFixed(1)} MB (${grownMb.toFixed(2)} MB)`,
    );
    // Kept whole, the 1,000 secrets alone would be 15 MB (the attack measured ~25 KB of heap each).
    assert.ok(grownMb < 3, `the heap grew by ${grownMb.toFixed(2)} MB`);
    const models = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${server.key}` } });
    assert.equal(models.status, 200, 'real keys still work');
  });
});
