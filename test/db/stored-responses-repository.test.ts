// The stored-responses repository, run against every storage backend (SQLite always; Postgres with TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { StoredResponsesRepository, type StoredResponseRecord } from '../../src/db/repositories/stored-responses-repository.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

function record(
  id: string,
  previousResponseId: string | null,
  organizationId = 'org-a',
  createdAt = 1_700_000_000_000,
): StoredResponseRecord {
  return {
    id,
    organizationId,
    previousResponseId,
    model: 'test-model',
    status: 'completed',
    instructions: id === 'resp_1' ? [{ type: 'message', role: 'system', content: 'Rules' }] : null,
    response: {
      id,
      object: 'response',
      output: [{ id: `msg_${id}`, type: 'message', content: [{ type: 'output_text', text: `answer of ${id} — ünïcødé` }] }],
    },
    inputItems: [{ id: `in_${id}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: `question of ${id}` }] }],
    createdAt,
  };
}

for (const backend of storageBackends()) {
  describe(`stored responses repository on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let repository: StoredResponsesRepository;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      assert.ok((await database.migrate()).includes('0002_stored_responses'));
      repository = new StoredResponsesRepository(database.db);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('a record round-trips: JSON columns, null link and instructions, millisecond timestamp', async () => {
      const first = record('resp_1', null, 'org-a', 1_800_000_000_123);
      await repository.insert(first);
      assert.deepEqual(await repository.findById('resp_1'), first);
      assert.equal(await repository.findById('resp_unknown'), undefined);
    });

    test('a chain is read oldest first in one query, from any of its responses', async () => {
      await repository.insert(record('resp_2', 'resp_1'));
      await repository.insert(record('resp_3', 'resp_2'));
      await repository.insert(record('resp_other', null, 'org-b'));
      assert.deepEqual(
        (await repository.findChain('resp_3')).map((entry) => entry.id),
        ['resp_1', 'resp_2', 'resp_3'],
      );
      assert.deepEqual(
        (await repository.findChain('resp_2')).map((entry) => entry.id),
        ['resp_1', 'resp_2'],
      );
      assert.deepEqual(
        (await repository.findChain('resp_1')).map((entry) => entry.previousResponseId),
        [null],
      );
      const chain = await repository.findChain('resp_3');
      assert.deepEqual(chain[2], record('resp_3', 'resp_2'));
      assert.deepEqual(await repository.findChain('resp_unknown'), []);
    });

    test('the depth limit stops the walk (the oldest record then still names its predecessor)', async () => {
      const chain = await repository.findChain('resp_3', 1);
      assert.deepEqual(
        chain.map((entry) => entry.id),
        ['resp_2', 'resp_3'],
      );
      assert.equal(chain[0]!.previousResponseId, 'resp_1');
    });

    test("delete removes only the owner organization's response; a chain over a deleted response is broken", async () => {
      assert.equal(await repository.delete('resp_2', 'org-b'), false);
      assert.ok((await repository.findById('resp_2')) !== undefined);
      assert.equal(await repository.delete('resp_2', 'org-a'), true);
      assert.equal(await repository.delete('resp_2', 'org-a'), false);
      assert.equal(await repository.findById('resp_2'), undefined);
      const chain = await repository.findChain('resp_3');
      assert.deepEqual(
        chain.map((entry) => entry.id),
        ['resp_3'],
      );
      assert.equal(chain[0]!.previousResponseId, 'resp_2', 'the broken link is visible to the caller');
    });

    test('a long chain is read in one query', async () => {
      let previous: string | null = null;
      for (let turn = 0; turn < 200; turn++) {
        const id = `resp_long_${turn}`;
        await repository.insert(record(id, previous));
        previous = id;
      }
      const chain = await repository.findChain('resp_long_199');
      assert.equal(chain.length, 200);
      assert.equal(chain[0]!.id, 'resp_long_0');
      assert.equal(chain[199]!.id, 'resp_long_199');
    });
  });
}
