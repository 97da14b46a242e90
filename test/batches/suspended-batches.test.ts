// A suspended organization's running batch pauses (no line runs, nothing fails) and resumes when the
// organization is reactivated, while another organization's batch runs on. Real server, real SQLite,
// the official openai SDK; the worker runs one line at a time so the batch is still running when the
// suspension lands.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { CLI_ACTOR } from '../../src/accounts/organizations.ts';
import { eventually } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

function lines(count: number): string {
  return Array.from({ length: count }, (_value, index) =>
    JSON.stringify({
      custom_id: `line-${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'switchyard-echo', max_tokens: 5, messages: [{ role: 'user', content: `line ${index}` }] },
    }),
  ).join('\n');
}

describe('batches of a suspended organization', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ config: { batches: { concurrency: 1, chunkSize: 1 } } });
  });
  after(async () => server?.close());

  test('pause while suspended (not fail) and resume on reactivation; another organization runs on', async () => {
    const paused = await server.createKey({ organization: 'org-paused', tier: 'Developer' });
    const running = await server.createKey({ organization: 'org-running', tier: 'Developer' });
    const start = async (key: string, count: number) => {
      const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
      const file = await client.files.create({ file: await toFile(Buffer.from(lines(count)), 'in.jsonl'), purpose: 'batch' });
      return {
        client,
        batch: await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      };
    };
    const suspended = await start(paused.key, 300);
    await eventually(async () =>
      (await suspended.client.batches.retrieve(suspended.batch.id)).status === 'in_progress' ? true : undefined,
    );
    await server.runtime.organizations.suspend('org-paused', CLI_ACTOR);
    // Within a poll of the key cache no line of it starts any more.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const before = (await server.runtime.batches.retrieveInOrganization('org-paused', suspended.batch.id)).completed;
    const other = await start(running.key, 5);
    const otherDone = await eventually(async () => {
      const current = await other.client.batches.retrieve(other.batch.id);
      return current.status === 'completed' ? current : undefined;
    }, 200);
    assert.equal(otherDone.request_counts?.completed, 5);
    const during = await server.runtime.batches.retrieveInOrganization('org-paused', suspended.batch.id);
    assert.equal(during.status, 'in_progress', 'paused, not failed');
    assert.equal(during.completed, before, 'no line ran while suspended');
    assert.equal(during.failed, 0);
    assert.ok(during.completed < 300);

    await server.runtime.organizations.resume('org-paused', CLI_ACTOR);
    const done = await eventually(
      async () => {
        const current = await suspended.client.batches.retrieve(suspended.batch.id);
        return current.status === 'completed' ? current : undefined;
      },
      600,
      100,
    );
    assert.equal(done.request_counts?.completed, 300);
    assert.equal(done.request_counts?.failed, 0);
  });
});
