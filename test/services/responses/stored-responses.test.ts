// Stored conversations over a real database (SQLite always; Postgres with TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isServiceError } from '../../../src/core/service-error.ts';
import { openDatabase, type Database } from '../../../src/db/database.ts';
import { StoredResponsesRepository } from '../../../src/db/repositories/stored-responses-repository.ts';
import { decodeInputItemsQuery } from '../../../src/formats/openai-responses/decode-request.ts';
import type { InputMessageItem, ResponseItem, ResponseObject } from '../../../src/formats/openai-responses/wire-types.ts';
import { StoredResponses } from '../../../src/services/responses/stored-responses.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../../support/databases.ts';

function userItem(id: string, text: string): InputMessageItem {
  return { id, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text }] };
}

function responseObject(id: string, previous: string | null, answer: string, instructions: string | null = null): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions,
    max_output_tokens: 100,
    model: 'test-model',
    output: [
      {
        id: `msg_out_${id}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: answer, annotations: [] }],
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: previous,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 0.7,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: {},
  };
}

function assertError(error: unknown, status: number, code: string, param: string | null, message?: RegExp): true {
  assert.ok(isServiceError(error), String(error));
  assert.equal(error.status, status);
  assert.equal(error.code, code);
  assert.equal(error.param, param);
  if (message !== undefined) assert.match(error.message, message);
  return true;
}

for (const backend of storageBackends()) {
  describe(`stored responses service on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let store: StoredResponses<ResponseItem, ResponseObject>;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      store = new StoredResponses(new StoredResponsesRepository(database.db), () => 1_700_000_000_000);
      // A three-turn conversation of org-a; turn 2 answered a function call of turn 1.
      await store.save({
        response: responseObject('resp_1', null, 'first answer', 'Old instructions'),
        inputItems: [userItem('msg_1', 'first question')],
        organizationId: 'org-a',
      });
      await store.save({
        response: responseObject('resp_2', 'resp_1', 'second answer'),
        inputItems: [userItem('msg_2', 'second question')],
        organizationId: 'org-a',
      });
      const thirdInput: ResponseItem[] = ['a', 'b', 'c', 'd', 'e'].map((letter) => userItem(`msg_3${letter}`, letter));
      await store.save({
        response: responseObject('resp_3', 'resp_2', 'third answer', 'New instructions'),
        inputItems: thirdInput,
        organizationId: 'org-a',
      });
      await store.save({
        response: responseObject('resp_b', null, 'other org'),
        inputItems: [userItem('msg_b', 'x')],
        organizationId: 'org-b',
      });
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('retrieve returns the stored Response object; another organization gets 404 response_not_found', async () => {
      assert.deepEqual(await store.retrieve('resp_2', 'org-a'), responseObject('resp_2', 'resp_1', 'second answer'));
      await assert.rejects(store.retrieve('resp_2', 'org-b'), (error) =>
        assertError(error, 404, 'response_not_found', 'response_id', /resp_2/),
      );
      await assert.rejects(store.retrieve('resp_nope', 'org-a'), (error) => assertError(error, 404, 'response_not_found', 'response_id'));
    });

    test('loadHistory prepends every earlier turn, oldest first: input items then output items, no instructions', async () => {
      const history = await store.loadHistory('resp_3', 'org-a');
      assert.deepEqual(
        history.map((item) => item.id),
        ['msg_1', 'msg_out_resp_1', 'msg_2', 'msg_out_resp_2', 'msg_3a', 'msg_3b', 'msg_3c', 'msg_3d', 'msg_3e', 'msg_out_resp_3'],
      );
      assert.ok(!JSON.stringify(history).includes('instructions'));
    });

    test("loadHistory refuses unknown ids and other organizations' ids alike: 400 previous_response_id", async () => {
      await assert.rejects(store.loadHistory('resp_nope', 'org-a'), (error) =>
        assertError(error, 400, 'invalid_parameter', 'previous_response_id', /not found/),
      );
      await assert.rejects(store.loadHistory('resp_b', 'org-a'), (error) =>
        assertError(error, 400, 'invalid_parameter', 'previous_response_id', /not found/),
      );
      await assert.rejects(store.loadHistory('resp_3', 'org-b'), (error) =>
        assertError(error, 400, 'invalid_parameter', 'previous_response_id'),
      );
    });

    test('input_items: cursor pages in both orders', async () => {
      const all = await store.listInputItems('resp_3', 'org-a', decodeInputItemsQuery({}));
      assert.deepEqual(
        all.data.map((item) => item.id),
        ['msg_3e', 'msg_3d', 'msg_3c', 'msg_3b', 'msg_3a'],
        'desc by default',
      );
      assert.equal(all.object, 'list');
      assert.equal(all.first_id, 'msg_3e');
      assert.equal(all.last_id, 'msg_3a');
      assert.equal(all.has_more, false);

      const pages: string[][] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.listInputItems(
          'resp_3',
          'org-a',
          decodeInputItemsQuery({ order: 'asc', limit: '2', ...(after === undefined ? {} : { after }) }),
        );
        pages.push(page.data.map((item) => item.id));
        if (!page.has_more) break;
        after = page.last_id!;
      }
      assert.deepEqual(pages, [['msg_3a', 'msg_3b'], ['msg_3c', 'msg_3d'], ['msg_3e']]);

      const empty = await store.listInputItems('resp_3', 'org-a', decodeInputItemsQuery({ after: 'msg_3a' }));
      assert.deepEqual(empty, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
      await assert.rejects(store.listInputItems('resp_3', 'org-a', decodeInputItemsQuery({ after: 'msg_zz' })), (error) =>
        assertError(error, 400, 'invalid_parameter', 'after'),
      );
      await assert.rejects(store.listInputItems('resp_3', 'org-b', decodeInputItemsQuery({})), (error) =>
        assertError(error, 404, 'response_not_found', 'response_id'),
      );
    });

    test("findItems: the organization's stored output items by id, never another organization's or input items", async () => {
      const found = await store.findItems(['msg_out_resp_1', 'msg_out_resp_3', 'msg_out_resp_b', 'msg_1', 'msg_unknown'], 'org-a');
      assert.deepEqual([...found.keys()].sort(), ['msg_out_resp_1', 'msg_out_resp_3']);
      assert.deepEqual(found.get('msg_out_resp_1'), responseObject('resp_1', null, 'first answer').output[0]);
      assert.deepEqual([...(await store.findItems(['msg_out_resp_b'], 'org-b')).keys()], ['msg_out_resp_b']);
      assert.equal((await store.findItems([], 'org-a')).size, 0);
    });

    test('delete: only by the owner, once; a conversation over a deleted response can no longer be continued', async () => {
      await assert.rejects(store.delete('resp_2', 'org-b'), (error) => assertError(error, 404, 'response_not_found', 'response_id'));
      assert.deepEqual(await store.delete('resp_2', 'org-a'), { id: 'resp_2', object: 'response', deleted: true });
      await assert.rejects(store.delete('resp_2', 'org-a'), (error) => assertError(error, 404, 'response_not_found', 'response_id'));
      await assert.rejects(store.retrieve('resp_2', 'org-a'), (error) => assertError(error, 404, 'response_not_found', 'response_id'));
      await assert.rejects(store.loadHistory('resp_3', 'org-a'), (error) =>
        assertError(error, 400, 'invalid_parameter', 'previous_response_id', /'resp_2' was deleted/),
      );
      assert.equal((await store.loadHistory('resp_1', 'org-a')).length, 2, 'the part before the deleted response still works');
      assert.deepEqual(
        [...(await store.findItems(['msg_out_resp_2', 'msg_out_resp_1'], 'org-a')).keys()],
        ['msg_out_resp_1'],
        "a deleted response's items are gone",
      );
    });
  });
}
