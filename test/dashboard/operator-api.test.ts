// The operator console's API and people management end to end on a real server (SQLite; Postgres too
// with TEST_DATABASE_URL): an operator account from a set-password link, plans moving the limits
// `/v1/auth/key` reports, a narrowed plan narrowing keys at once, suspension answering 403 while
// another organization goes on, keys bounded by the plan, the operators' own audit log, the fleet,
// invitations, roles, removal ending sessions at once, and password changes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { createPostgresTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { createOwner, DashboardClient, eventually } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';

async function keyStatus(server: TestServer, key: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

for (const backend of storageBackends()) {
  describe(`operator console API on ${backend}`, () => {
    let server: TestServer;
    let postgres: TestDatabase | undefined;
    let operator: DashboardClient;
    let owner: DashboardClient;
    let alphaKey: { key: string; id: string };
    let betaKey: { key: string; id: string };

    before(async () => {
      postgres = backend === 'postgres' ? await createPostgresTestDatabase() : undefined;
      server = await startTestServer({ config: postgres === undefined ? {} : { databaseUrl: postgres.url } });
      alphaKey = await server.createKey({ organization: 'org-alpha', tier: 'Developer' });
      betaKey = await server.createKey({ organization: 'org-beta', tier: 'Developer' });
      await createOwner(server.runtime, 'org-alpha', 'alice@example.com', PASSWORD);
      const issued = await server.runtime.people.createOperator('ops@example.com', server.origin);
      assert.equal(issued.delivery, 'logged');
      operator = new DashboardClient(server.origin);
      const token = /#token=([A-Za-z0-9]+)$/.exec(issued.link)![1]!;
      const set = await operator.request('POST', 'set-password', { token, password: PASSWORD }, { csrf: false });
      assert.equal(set.status, 200);
      assert.equal(set.body.role, 'operator');
      assert.equal((await operator.signIn('ops@example.com', PASSWORD)).status, 200);
      owner = new DashboardClient(server.origin);
      assert.equal((await owner.signIn('alice@example.com', PASSWORD)).status, 200);
    });
    after(async () => {
      await server.close();
      await postgres?.drop();
    });

    test('operators and owners each reach only their own area', async () => {
      assert.equal((await owner.request('GET', 'operator/organizations')).status, 403);
      const keys = await operator.request('GET', 'keys');
      assert.equal(keys.status, 403);
      assert.match(keys.body.error.message, /operator area/);
      // Their own account pages work for operators too.
      assert.equal((await operator.request('GET', 'session')).status, 200);
      assert.equal((await operator.request('POST', 'operator/organizations/org-alpha/suspend', undefined, { csrf: false })).status, 401);
    });

    test('the organizations list finds an organization with its plan, members and keys', async () => {
      const all = await operator.request('GET', 'operator/organizations');
      assert.equal(all.status, 200);
      const ids = all.body.data.map((row: { id: string }) => row.id);
      assert.ok(ids.includes('org-alpha') && ids.includes('org-beta'));
      assert.ok(!ids.includes('_operators'), 'the operators organization is never listed');
      const found = await operator.request('GET', 'operator/organizations?search=ALPHA');
      assert.deepEqual(
        found.body.data.map((row: { id: string }) => row.id),
        ['org-alpha'],
      );
      const byEmail = await operator.request('GET', 'operator/organizations?search=alice@');
      assert.deepEqual(
        byEmail.body.data.map((row: { id: string }) => row.id),
        ['org-alpha'],
      );
      const row = found.body.data[0];
      assert.equal(row.plan, 'Developer');
      assert.equal(row.status, 'active');
      assert.equal(row.members, 1);
      assert.equal(row.active_keys, 1);
    });

    test('a new plan shows in /v1/auth/key at once; a narrower one narrows the keys', async () => {
      const moved = await operator.request('POST', 'operator/organizations/org-alpha/plan', { plan: 'Production' });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      const production = server.config.tiers['Production']!;
      await eventually(async () => {
        const status = await keyStatus(server, alphaKey.key);
        return status.body.usage_info.daily.limit === production.tokensPerDay ? true : undefined;
      }, 30);
      // Another organization is untouched.
      assert.equal((await keyStatus(server, betaKey.key)).body.usage_info.daily.limit, server.config.tiers['Developer']!.tokensPerDay);

      const narrowed = await operator.request('POST', 'operator/organizations/org-alpha/plan', { plan: 'Free' });
      assert.equal(narrowed.body.narrowed_keys, 1);
      const status = await eventually(async () => {
        const current = await keyStatus(server, alphaKey.key);
        return current.body.tier === 'Free' ? current : undefined;
      }, 30);
      assert.ok(!status.body.permissions.includes('batches'), 'the Free plan has no batch API');
      assert.equal(status.body.usage_info.monthly.limit, server.config.tiers['Free']!.tokensPerMonth);
    });

    test('overrides make a custom plan; unknown figures and bad values are 400 with their param', async () => {
      const custom = await operator.request('POST', 'operator/organizations/org-alpha/plan', {
        plan: 'Developer',
        overrides: { tokensPerDay: 123_456, maxRequestsPerBatch: 60_000 },
      });
      assert.equal(custom.status, 200);
      assert.equal(custom.body.plan.custom, true);
      assert.equal(custom.body.plan.max_requests_per_batch, 60_000);
      await eventually(
        async () => ((await keyStatus(server, alphaKey.key)).body.usage_info.daily.limit === 123_456 ? true : undefined),
        30,
      );
      const unknown = await operator.request('POST', 'operator/organizations/org-alpha/plan', {
        plan: 'Developer',
        overrides: { speed: 1 },
      });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.error.param, 'overrides.speed');
      const negative = await operator.request('POST', 'operator/organizations/org-alpha/plan', {
        plan: 'Developer',
        overrides: { requestsPerMinute: -1 },
      });
      assert.equal(negative.body.error.param, 'overrides.requestsPerMinute');
      const badPlan = await operator.request('POST', 'operator/organizations/org-alpha/plan', { plan: 'Gold' });
      assert.equal(badPlan.status, 400);
      assert.equal(badPlan.body.error.param, 'plan');
      assert.equal((await operator.request('POST', 'operator/organizations/org-nope/suspend')).status, 404);
    });

    test('a key with a permission outside the plan cannot be created (dashboard)', async () => {
      await operator.request('POST', 'operator/organizations/org-alpha/plan', {
        plan: 'Developer',
        overrides: { permissions: ['chat.completions', 'models'] },
      });
      const refused = await owner.request('POST', 'keys', { name: 'too wide', permissions: ['chat.completions', 'embeddings'] });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error.param, 'permissions');
      assert.match(refused.body.error.message, /does not allow the permission\(s\) embeddings/);
      const higherTier = await owner.request('POST', 'keys', { name: 'too high', tier: 'Production' });
      assert.equal(higherTier.status, 400);
      const fits = await owner.request('POST', 'keys', { name: 'fits', permissions: ['chat.completions'] });
      assert.equal(fits.status, 201, JSON.stringify(fits.body));
      await operator.request('POST', 'operator/organizations/org-alpha/plan', { plan: 'Developer', overrides: null });
    });

    test('a suspended organization answers 403 saying so, another goes on; reactivation restores it', async () => {
      const alpha = new OpenAI({ apiKey: alphaKey.key, baseURL: server.baseUrl, maxRetries: 0 });
      const beta = new OpenAI({ apiKey: betaKey.key, baseURL: server.baseUrl, maxRetries: 0 });
      const chat = (client: OpenAI) =>
        client.chat.completions.create({ model: 'switchyard-echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal((await operator.request('POST', 'operator/organizations/org-alpha/suspend')).status, 200);
      const failure = await eventually(async () => {
        try {
          await chat(alpha);
          return undefined;
        } catch (error) {
          return error as { status: number; error: { type: string; code: string; message: string } };
        }
      }, 30);
      assert.equal(failure.status, 403);
      assert.equal(failure.error.type, 'auth_error');
      assert.equal(failure.error.code, 'invalid_api_key');
      assert.match(failure.error.message, /org-alpha is suspended/);
      assert.ok((await chat(beta)).choices[0]!.message.content);
      const banner = await owner.request('GET', 'organization');
      assert.equal(banner.body.status, 'suspended');
      assert.equal((await operator.request('POST', 'operator/organizations/org-alpha/resume')).status, 200);
      await eventually(async () => {
        try {
          return (await chat(alpha)).choices.length > 0 ? true : undefined;
        } catch {
          return undefined;
        }
      }, 30);
    });

    test("the operators' audit log names who changed what, when and from where; the fleet lists this instance", async () => {
      const audit = await operator.request('GET', 'operator/audit?limit=100');
      assert.equal(audit.status, 200);
      const actions = audit.body.data.map((entry: { action: string }) => entry.action);
      assert.ok(actions.includes('organization.plan_changed'));
      assert.ok(actions.includes('organization.suspended'));
      assert.ok(actions.includes('organization.reactivated'));
      const entry = audit.body.data.find((item: { action: string }) => item.action === 'organization.suspended');
      assert.equal(entry.actor, 'ops@example.com');
      assert.equal(entry.organization, 'org-alpha');
      assert.match(entry.address, /127\.0\.0\.1/);
      // Kept apart from the organization's own log.
      const ownersLog = await owner.request('GET', 'audit');
      assert.ok(!ownersLog.body.data.some((item: { action: string }) => item.action.startsWith('organization.')));
      const fleet = await operator.request('GET', 'operator/fleet');
      assert.equal(fleet.body.instances.length, 1);
      assert.match(fleet.body.instances[0].version, /^\d+\.\d+\.\d+/);
      assert.ok(fleet.body.deployments.some((row: { model: string }) => row.model === 'switchyard-echo'));
      const plans = await operator.request('GET', 'operator/plans');
      // org-alpha and org-beta, and the default organization of the test server's own key.
      assert.equal(plans.body.data.find((tier: { name: string }) => tier.name === 'Developer').organizations, 3);
    });

    test('owners invite, change roles and remove people; a removed person is refused at once', async () => {
      const invited = await owner.request('POST', 'people/invite', { email: 'Mo@Example.com', role: 'owner' });
      assert.equal(invited.status, 201, JSON.stringify(invited.body));
      assert.equal(invited.body.delivery, 'logged');
      const token = /#token=([A-Za-z0-9]+)$/.exec(invited.body.link)![1]!;
      const mo = new DashboardClient(server.origin);
      assert.equal((await mo.request('POST', 'set-password', { token, password: PASSWORD }, { csrf: false })).status, 200);
      assert.equal((await mo.signIn('mo@example.com', PASSWORD)).status, 200);
      const listed = await owner.request('GET', 'people');
      const moRow = listed.body.data.find((person: { email: string }) => person.email === 'mo@example.com');
      assert.equal((await owner.request('POST', `people/${moRow.id}/role`, { role: 'member' })).status, 200);
      const readOnly = await mo.request('POST', 'keys', { name: 'nope' });
      assert.equal(readOnly.status, 403);
      assert.equal((await mo.request('GET', 'keys')).status, 200);
      assert.equal((await owner.request('DELETE', `people/${moRow.id}`)).status, 200);
      const refused = await mo.request('GET', 'keys');
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error.code, 'invalid_token');
      // The last owner stays.
      const me = listed.body.data.find((person: { you: boolean }) => person.you);
      const last = await owner.request('POST', `people/${me.id}/role`, { role: 'member' });
      assert.equal(last.status, 409);
      assert.equal(last.body.error.code, 'last_owner');
      // Someone of this very organization: said plainly (nothing about other organizations is revealed).
      const duplicate = await owner.request('POST', 'people/invite', { email: 'alice@example.com', role: 'member' });
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.body.error.code, 'already_a_member');
      assert.equal(duplicate.body.error.param, 'email');
    });

    test('a password change needs the current password and ends the other sessions', async () => {
      const second = new DashboardClient(server.origin);
      assert.equal((await second.signIn('alice@example.com', PASSWORD)).status, 200);
      const wrong = await owner.request('POST', 'password', { current_password: 'not it at all', new_password: 'a new long password' });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.error.param, 'current_password');
      const changed = await owner.request('POST', 'password', { current_password: PASSWORD, new_password: 'a new long password' });
      assert.equal(changed.status, 200);
      assert.equal((await owner.request('GET', 'session')).status, 200);
      assert.equal((await second.request('GET', 'session')).status, 401);
      assert.equal((await new DashboardClient(server.origin).signIn('alice@example.com', 'a new long password')).status, 200);
    });
  });
}
