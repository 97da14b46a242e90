// The owners' pages of issue 31 through the dashboard API (SQLite; Postgres too with TEST_DATABASE_URL):
// keys, files, batches and audit a page at a time (`limit`, `after`, `q`: no silent cut at 100/200),
// key rename and permission edits bounded by the plan, a rotated key marked with its replacement, the
// audit log naming keys as the keys page does, file upload, and usage per key and per model with the
// organization's limits and the rule they follow.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { PERMISSIONS } from '../../src/config/index.ts';
import { createPostgresTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { createOwner, DashboardClient, eventually } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';

/** Every row of a paged list, following `next`, with the pages' sizes. */
async function allPages(client: DashboardClient, path: string, limit: number): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page = await client.request(
      'GET',
      `${path}${separator}limit=${limit}${cursor === null ? '' : `&after=${encodeURIComponent(cursor)}`}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    ids.push(...page.body.data.map((row: any) => String(row.id)));
    sizes.push(page.body.data.length);
    assert.equal(page.body.has_more, page.body.next !== null);
    cursor = page.body.next;
  } while (cursor !== null);
  return { ids, sizes };
}

async function upload(client: DashboardClient, name: string, content: string, purpose = 'user_data', csrf = true): Promise<Response> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([content]), name);
  return fetch(`${client.origin}/dashboard/api/files`, {
    method: 'POST',
    headers: { cookie: `switchyard_session=${client.cookie}`, ...(csrf ? { 'x-csrf-token': client.csrf! } : {}) },
    body: form,
  });
}

for (const backend of storageBackends()) {
  describe(`dashboard lists and owner pages on ${backend}`, () => {
    let server: TestServer;
    let postgres: TestDatabase | undefined;
    let owner: DashboardClient;
    let member: DashboardClient;

    before(async () => {
      postgres = backend === 'postgres' ? await createPostgresTestDatabase() : undefined;
      server = await startTestServer({ config: postgres === undefined ? {} : { databaseUrl: postgres.url } });
      await createOwner(server.runtime, 'org-lists', 'lena@example.com', PASSWORD, { allowedTiers: ['Developer'] });
      await createOwner(server.runtime, 'org-lists', 'max@example.com', PASSWORD, { role: 'member' });
      owner = new DashboardClient(server.origin);
      member = new DashboardClient(server.origin);
      assert.equal((await owner.signIn('lena@example.com', PASSWORD)).status, 200);
      assert.equal((await member.signIn('max@example.com', PASSWORD)).status, 200);
    });
    after(async () => {
      await server.close();
      await postgres?.drop();
    });

    test('keys come a page at a time, newest first, every key once; q searches name, prefix and id', async () => {
      const made: string[] = [];
      for (let index = 0; index < 57; index++) {
        const created = await server.runtime.keys.create({ organization: 'org-lists', tier: 'Developer', name: `bulk ${index}` });
        made.push(created.record.id);
      }
      // A later millisecond than the bulk keys: keys of one millisecond come in id order.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await server.runtime.keys.create({ organization: 'org-lists', tier: 'Developer', name: 'Needle_100% key' });
      const first = await owner.request('GET', 'keys');
      assert.equal(first.body.data.length, 50, 'the default page is 50 keys');
      assert.equal(first.body.has_more, true);
      assert.equal(first.body.data[0].name, 'Needle_100% key', 'newest first');
      assert.ok(Array.isArray(first.body.allowed_tiers) && first.body.permissions.length > 0, 'the create form still has its figures');
      const { ids, sizes } = await allPages(owner, 'keys', 20);
      assert.deepEqual(sizes, [20, 20, 18]);
      assert.equal(new Set(ids).size, 58);
      for (const id of made) assert.ok(ids.includes(id), `${id} is listed`);

      const needle = await owner.request('GET', `keys?q=${encodeURIComponent('needle_100%')}`);
      assert.deepEqual(
        needle.body.data.map((key: any) => key.name),
        ['Needle_100% key'],
      );
      // `%` and `_` are the text itself, not wildcards.
      assert.equal((await owner.request('GET', `keys?q=${encodeURIComponent('bulk_1')}`)).body.data.length, 0);
      assert.equal((await owner.request('GET', 'keys?q=bulk%201')).body.data.length, 11, 'bulk 1 and bulk 10-19');
      const byPrefix = first.body.data[3];
      assert.ok(
        (await owner.request('GET', `keys?q=${encodeURIComponent(byPrefix.prefix.slice(-4))}`)).body.data.some(
          (key: any) => key.id === byPrefix.id,
        ),
      );
      assert.equal((await owner.request('GET', 'keys?limit=0')).status, 400);
      assert.equal((await owner.request('GET', 'keys?after=key_nothere')).status, 404);
    });

    test('an owner renames a key and changes its permissions within the plan; members may not', async () => {
      const key = await server.runtime.keys.create({ organization: 'org-lists', tier: 'Developer', name: 'to rename' });
      const renamed = await owner.request('POST', `keys/${key.record.id}`, { name: 'renamed key', permissions: ['chat.completions'] });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      assert.equal(renamed.body.name, 'renamed key');
      assert.deepEqual(renamed.body.permissions, ['chat.completions']);
      assert.equal((await server.runtime.keys.findById(key.record.id))!.name, 'renamed key');

      const plan = await server.runtime.organizations.planOf('org-lists');
      const outside = PERMISSIONS.filter((permission) => !(plan!.permissions as string[]).includes(permission));
      if (outside.length > 0) {
        const refused = await owner.request('POST', `keys/${key.record.id}`, { permissions: ['chat.completions', outside[0]] });
        assert.equal(refused.status, 400);
        assert.equal(refused.body.error.param, 'permissions');
      }
      assert.equal((await owner.request('POST', `keys/${key.record.id}`, {})).status, 400);
      assert.equal((await member.request('POST', `keys/${key.record.id}`, { name: 'nope' })).status, 403);
      const audit = await owner.request('GET', `audit?q=key.updated`);
      assert.equal(audit.body.data[0].action, 'key.updated');
      assert.equal(audit.body.data[0].target_label, `renamed key (${key.record.redacted})`);
    });

    test("a rotated key's old row names its replacement; the audit log names both keys as the keys page does", async () => {
      const key = await server.runtime.keys.create({ organization: 'org-lists', tier: 'Developer', name: 'rotating' });
      const rotated = await owner.request('POST', `keys/${key.record.id}/rotate`, { grace_seconds: 600 });
      assert.equal(rotated.status, 201);
      assert.equal(rotated.body.previous.replaced_by, rotated.body.id);
      const old = (await owner.request('GET', 'keys?q=rotating')).body.data.find((entry: any) => entry.id === key.record.id);
      assert.equal(old.replaced_by, rotated.body.id);
      assert.equal(old.status, 'active');
      assert.ok(old.expires_at > Date.now() + 500_000);
      const entry = (await owner.request('GET', 'audit?q=key.rotated')).body.data[0];
      assert.equal(entry.target, `${key.record.id} -> ${rotated.body.id}`);
      assert.equal(entry.target_label, `rotating (${key.record.redacted}) -> rotating (${rotated.body.prefix})`);
    });

    test('the audit log comes a page at a time (by id, newest first) and is searchable', async () => {
      const { ids } = await allPages(owner, 'audit', 3);
      const numbers = ids.map(Number);
      assert.deepEqual(
        numbers,
        [...numbers].sort((a, b) => b - a),
      );
      assert.equal(new Set(numbers).size, numbers.length);
      const everything = (await owner.request('GET', 'audit?limit=100')).body.data.length;
      assert.equal(numbers.length, everything);
      const signIns = (await owner.request('GET', 'audit?q=SIGN_IN')).body.data;
      assert.ok(signIns.length >= 2 && signIns.every((row: any) => row.action.startsWith('sign_in')));
    });

    test('files: owners upload (multipart, CSRF required), the list is paged and searchable, sizes and expiry come with it', async () => {
      for (const name of ['alpha.txt', 'beta.txt', 'gamma.jsonl']) {
        const response = await upload(owner, name, `content of ${name}`);
        assert.equal(response.status, 201, await response.clone().text());
        const file = (await response.json()) as any;
        assert.equal(file.filename, name);
        assert.equal(file.bytes, `content of ${name}`.length);
        assert.ok('expires_at' in file);
      }
      assert.equal((await upload(owner, 'forged.txt', 'x', 'user_data', false)).status, 401);
      assert.equal((await upload(member, 'member.txt', 'x')).status, 403);
      assert.equal((await upload(owner, 'bad.txt', 'x', 'batch_output')).status, 400);
      const { ids, sizes } = await allPages(owner, 'files', 2);
      assert.deepEqual(sizes, [2, 1]);
      assert.equal(new Set(ids).size, 3);
      const found = await owner.request('GET', 'files?q=GAMMA');
      assert.deepEqual(
        found.body.data.map((file: any) => file.filename),
        ['gamma.jsonl'],
      );
      const audit = await owner.request('GET', 'audit?q=file.uploaded');
      assert.equal(audit.body.data.length, 3);
    });

    test('batches: paged and searchable by id, endpoint or status', async () => {
      const key = await server.createKey({ organization: 'org-lists', tier: 'Developer', permissions: ['embeddings', 'files', 'batches'] });
      const made: string[] = [];
      for (let index = 0; index < 3; index++) {
        const form = new FormData();
        form.append('purpose', 'batch');
        const line = JSON.stringify({
          custom_id: `r${index}`,
          method: 'POST',
          url: '/v1/embeddings',
          body: { model: 'switchyard-embeddings', input: 'hi' },
        });
        form.append('file', new Blob([line]), `in-${index}.jsonl`);
        const file = (await (
          await fetch(`${server.baseUrl}/files`, { method: 'POST', headers: { authorization: `Bearer ${key.key}` }, body: form })
        ).json()) as any;
        const batch = (await (
          await fetch(`${server.baseUrl}/batches`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' }),
          })
        ).json()) as any;
        assert.match(batch.id, /^batch/, JSON.stringify(batch));
        made.push(batch.id);
      }
      const { ids, sizes } = await allPages(owner, 'batches', 2);
      assert.deepEqual(sizes, [2, 1]);
      assert.deepEqual(ids, [...made].reverse());
      const one = await owner.request('GET', `batches?q=${made[1]!.slice(-8)}`);
      assert.deepEqual(
        one.body.data.map((batch: any) => batch.id),
        [made[1]],
      );
      assert.equal((await owner.request('GET', 'batches?q=embeddings')).body.data.length, 3);
      assert.equal((await owner.request('GET', 'batches?after=batch_nothere')).status, 400);
    });

    test("usage per key and per model, with the organization's plan and the rule its limits follow", async () => {
      const key = await server.runtime.keys.create({ organization: 'org-lists', tier: 'Developer', name: 'usage key' });
      const client = new OpenAI({ apiKey: key.key, baseURL: server.baseUrl, maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: 'switchyard-echo',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'count me per key' }],
      });
      const usage = await eventually(async () => {
        const report = (await owner.request('GET', 'usage?days=7')).body;
        return report.by_key.some((row: any) => row.key_id === key.record.id) ? report : undefined;
      });
      const row = usage.by_key.find((entry: any) => entry.key_id === key.record.id);
      assert.equal(row.name, 'usage key');
      assert.equal(row.prefix, key.record.redacted);
      assert.equal(row.requests, 1);
      assert.equal(row.input_tokens + row.output_tokens, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
      const model = usage.by_model.find((entry: any) => entry.model === 'switchyard-echo');
      assert.equal(model.requests, 1);
      const plan = await server.runtime.organizations.planOf('org-lists');
      assert.equal(usage.plan.tier, plan!.tier);
      assert.equal(usage.plan.tokens_per_day, plan!.tokensPerDay);
      if (plan!.tokensPerDay !== 0) assert.equal(usage.limits.daily.limit, plan!.tokensPerDay, "the day limit is the plan's");
      assert.match(usage.limits_rule, /organization's plan, shared by all its keys; per-minute limits are each key's tier/);
    });
  });
}
