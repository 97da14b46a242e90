// The owners' dashboard API end to end on a real server (SQLite; Postgres too with TEST_DATABASE_URL):
// sign-in, keys used by the official openai SDK, usage from rollups agreeing with /v1/auth/key,
// revocation and rotation, session expiry, CSRF, session/key separation, members, cross-org isolation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { Secret, TOTP } from 'otpauth';
import { createPostgresTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { createOwner, DashboardClient, eventually, sdkFailureStatus } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';

for (const backend of storageBackends()) {
  describe(`dashboard API on ${backend}`, () => {
    let server: TestServer;
    let postgres: TestDatabase | undefined;
    let owner: DashboardClient;

    before(async () => {
      postgres = backend === 'postgres' ? await createPostgresTestDatabase() : undefined;
      server = await startTestServer({ config: postgres === undefined ? {} : { databaseUrl: postgres.url } });
      await createOwner(server.runtime, 'org-alpha', 'alice@example.com', PASSWORD, { allowedTiers: ['Developer', 'Free'] });
      await createOwner(server.runtime, 'org-beta', 'bob@example.com', PASSWORD);
      await createOwner(server.runtime, 'org-alpha', 'mia@example.com', PASSWORD, { role: 'member' });
      owner = new DashboardClient(server.origin);
      assert.equal((await owner.signIn('Alice@Example.com', PASSWORD)).status, 200);
    });
    after(async () => {
      await server.close();
      await postgres?.drop();
    });

    test('sign-in sets an HttpOnly, SameSite=Lax session cookie scoped to /dashboard; Secure behind TLS', async () => {
      assert.match(owner.setCookie!, /HttpOnly/);
      assert.match(owner.setCookie!, /SameSite=Lax/);
      assert.match(owner.setCookie!, /Path=\/dashboard/);
      assert.doesNotMatch(owner.setCookie!, /Secure/);
      const overTls = new DashboardClient(server.origin);
      const response = await overTls.request(
        'POST',
        'sign-in',
        { email: 'alice@example.com', password: PASSWORD },
        { headers: { 'x-forwarded-proto': 'https' } },
      );
      assert.equal(response.status, 200);
      assert.match(response.headers.get('set-cookie')!, /Secure/);
      const session = await owner.request('GET', 'session');
      assert.equal(session.body.email, 'alice@example.com');
      assert.equal(session.body.organization, 'org-alpha');
      assert.equal(session.body.csrf_token, owner.csrf);
    });

    test('a missing, malformed or unknown session is 401 invalid_token in the SPEC envelope', async () => {
      for (const cookie of [null, 'short', 'A'.repeat(43)]) {
        const response = await owner.request('GET', 'keys', undefined, { cookie });
        assert.equal(response.status, 401);
        assert.equal(response.body.error.type, 'auth_error');
        assert.equal(response.body.error.code, 'invalid_token');
        assert.ok(response.body.info_metadata, 'SPEC envelope carries info_metadata');
      }
      const wrong = await new DashboardClient(server.origin).signIn('alice@example.com', 'not the password');
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error.code, 'invalid_credentials');
    });

    test('create a key, use it with the openai SDK, see it in usage agreeing with /v1/auth/key, revoke it and the SDK gets 401', async () => {
      const keys = await owner.request('GET', 'keys');
      assert.deepEqual(
        keys.body.allowed_tiers.map((tier: any) => tier.name),
        ['Developer', 'Free'],
      );
      const refused = await owner.request('POST', 'keys', { name: 'too high', tier: 'Enterprise' });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error.param, 'tier');
      const created = await owner.request('POST', 'keys', {
        name: 'sdk',
        tier: 'Developer',
        permissions: ['chat.completions', 'models'],
        expires_in_days: 30,
      });
      assert.equal(created.status, 201);
      assert.match(created.body.key, /^sk-sy-/);
      assert.equal(created.body.status, 'active');
      const listed = (await owner.request('GET', 'keys')).body.data.find((key: any) => key.id === created.body.id);
      assert.equal(listed.key, undefined, 'the secret is shown once, never listed');
      assert.equal(listed.prefix.slice(0, 9), created.body.key.slice(0, 9));

      const client = new OpenAI({ apiKey: created.body.key, baseURL: server.baseUrl, maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: 'switchyard-echo',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hello dashboard' }],
      });
      const tokens = completion.usage!.prompt_tokens + completion.usage!.completion_tokens;

      const usage = await eventually(async () => {
        const response = await owner.request('GET', 'usage?days=7');
        return response.body.data.some((row: any) => row.model === 'switchyard-echo') ? response.body : undefined;
      });
      const row = usage.data.find((entry: any) => entry.model === 'switchyard-echo');
      assert.equal(row.requests, 1);
      assert.equal(row.input_tokens + row.output_tokens, tokens);
      // Today's and this month's figures are the ones /v1/auth/key answers from (the enforcing counters).
      const authKey: any = await (
        await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${created.body.key}` } })
      ).json();
      const again = (await owner.request('GET', 'usage?days=7')).body;
      assert.equal(again.limits.tier, 'Developer');
      assert.deepEqual(again.limits.daily, authKey.usage_info.daily);
      assert.deepEqual(again.limits.monthly, authKey.usage_info.monthly);
      assert.equal(again.limits.daily.used, tokens);
      const csv = await owner.request('GET', 'usage.csv?days=7');
      assert.match(csv.headers.get('content-type')!, /text\/csv/);
      assert.match(String(csv.body), /^date,model,requests/);
      assert.match(String(csv.body), /"switchyard-echo",1,/);
      assert.ok((await owner.request('GET', 'keys')).body.data.find((key: any) => key.id === created.body.id).last_used_day > 0);

      const revoked = await owner.request('POST', `keys/${created.body.id}/revoke`);
      assert.equal(revoked.body.status, 'revoked');
      assert.equal(await sdkFailureStatus(client), 401);
    });

    test('rotation: the new key works at once, the old one until its grace period ends', async () => {
      const created = await owner.request('POST', 'keys', { name: 'rotating', tier: 'Developer' });
      const graceful = await owner.request('POST', `keys/${created.body.id}/rotate`, { grace_seconds: 3600 });
      assert.equal(graceful.status, 201);
      assert.notEqual(graceful.body.key, created.body.key);
      assert.equal(graceful.body.name, 'rotating');
      assert.ok(graceful.body.previous.expires_at > Date.now() + 3_500_000);
      for (const key of [created.body.key, graceful.body.key]) {
        assert.equal((await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
      }
      const immediate = await owner.request('POST', `keys/${graceful.body.id}/rotate`, { grace_seconds: 0 });
      assert.equal(immediate.status, 201);
      const oldStatus = await eventually(async () => {
        const response = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${graceful.body.key}` } });
        return response.status === 401 ? ((await response.json()) as any).error : undefined;
      });
      assert.equal(oldStatus.code, 'token_expired');
      // The owner rotated it: the answer points at the replacement, not at "the operator" (issue 40 item 10).
      assert.match(oldStatus.message, /replaced by a rotation.*Use the key that replaced it/);
      assert.doesNotMatch(oldStatus.message, /operator/);
      assert.equal((await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${immediate.body.key}` } })).status, 200);
      const audit = (await owner.request('GET', 'audit')).body.data.map((entry: any) => entry.action);
      for (const action of ['key.created', 'key.revoked', 'key.rotated', 'sign_in.succeeded', 'sign_in.failed'])
        assert.ok(audit.includes(action), action);
      assert.equal((await owner.request('GET', 'audit')).body.data[0].actor, 'alice@example.com');
    });

    test('state-changing calls without the CSRF token, or with a wrong one, are refused with 401 invalid_token', async () => {
      const before = (await owner.request('GET', 'keys')).body.data.length;
      const missing = await owner.request('POST', 'keys', { name: 'csrf' }, { csrf: false });
      assert.equal(missing.status, 401);
      assert.equal(missing.body.error.code, 'invalid_token');
      const wrong = await owner.request('POST', 'keys', { name: 'csrf' }, { csrf: false, headers: { 'x-csrf-token': 'x'.repeat(43) } });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error.code, 'invalid_token');
      assert.equal((await owner.request('GET', 'keys')).body.data.length, before);
    });

    test('a session cannot call /v1 and an API key cannot call the dashboard API', async () => {
      const withSession = await fetch(`${server.baseUrl}/models`, { headers: { cookie: `switchyard_session=${owner.cookie}` } });
      assert.equal(withSession.status, 401);
      assert.equal(((await withSession.json()) as any).error.code, 'missing_api_key');
      const withKey = await owner.request('GET', 'keys', undefined, { cookie: null, headers: { authorization: `Bearer ${server.key}` } });
      assert.equal(withKey.status, 401);
      assert.equal(withKey.body.error.code, 'invalid_token');
    });

    test('an expired session answers 401 session_expired; sign-in mints a new session id (no fixation)', async () => {
      const client = new DashboardClient(server.origin);
      await client.signIn('alice@example.com', PASSWORD);
      const planted = client.cookie!;
      // Signing in again while presenting the old cookie must not keep it.
      await client.signIn('alice@example.com', PASSWORD);
      assert.notEqual(client.cookie, planted);
      const organizationSessions = server.runtime.database.db
        .updateTable('dashboard_sessions')
        .set({ idle_expires_at: Date.now() - 1000 })
        .where('owner_id', '=', (await server.runtime.accounts.findOwnerByEmail('alice@example.com'))!.id);
      await organizationSessions.where('id', '=', (await client.request('GET', 'session')).body.id).execute();
      const expired = await client.request('GET', 'keys');
      assert.equal(expired.status, 401);
      assert.equal(expired.body.error.type, 'auth_error');
      assert.equal(expired.body.error.code, 'session_expired');
    });

    test('sessions are listed and can be signed out one by one or everywhere', async () => {
      const second = new DashboardClient(server.origin);
      await second.signIn('alice@example.com', PASSWORD);
      const sessions = (await second.request('GET', 'sessions')).body.data;
      assert.ok(sessions.length >= 2);
      assert.equal(sessions.filter((entry: any) => entry.current).length, 1);
      const third = new DashboardClient(server.origin);
      await third.signIn('alice@example.com', PASSWORD);
      const thirdId = (await third.request('GET', 'session')).body.id;
      assert.equal((await second.request('POST', `sessions/${thirdId}/revoke`)).status, 200);
      assert.equal((await third.request('GET', 'session')).body.error.code, 'invalid_token');
      assert.equal((await second.request('POST', 'sessions/revoke-all')).status, 200);
      assert.equal((await second.request('GET', 'session')).status, 401);
      assert.equal((await owner.request('GET', 'session')).status, 401);
      await owner.signIn('alice@example.com', PASSWORD);
    });

    test('members read but do not change', async () => {
      const member = new DashboardClient(server.origin);
      await member.signIn('mia@example.com', PASSWORD);
      assert.equal((await member.request('GET', 'keys')).status, 200);
      const refused = await member.request('POST', 'keys', { name: 'nope' });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.type, 'permission_error');
    });

    test("one organization's owner cannot see or touch another's keys, batches or files", async () => {
      const alphaKey = await server.createKey({ organization: 'org-alpha' });
      const upload = new FormData();
      upload.append('purpose', 'batch');
      upload.append(
        'file',
        new Blob(['{"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{"model":"switchyard-embeddings","input":"x"}}\n']),
        'alpha.jsonl',
      );
      const file: any = await (
        await fetch(`${server.baseUrl}/files`, { method: 'POST', headers: { authorization: `Bearer ${alphaKey.key}` }, body: upload })
      ).json();
      const batch: any = await (
        await fetch(`${server.baseUrl}/batches`, {
          method: 'POST',
          headers: { authorization: `Bearer ${alphaKey.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' }),
        })
      ).json();
      assert.match(batch.id, /^batch/);
      assert.ok((await owner.request('GET', 'files')).body.data.some((entry: any) => entry.id === file.id));
      assert.ok((await owner.request('GET', 'batches')).body.data.some((entry: any) => entry.id === batch.id));
      assert.equal((await owner.request('GET', `batches/${batch.id}`)).body.id, batch.id);

      const bob = new DashboardClient(server.origin);
      await bob.signIn('bob@example.com', PASSWORD);
      assert.ok(!(await bob.request('GET', 'keys')).body.data.some((key: any) => key.id === alphaKey.id));
      assert.equal((await bob.request('POST', `keys/${alphaKey.id}/revoke`)).status, 404);
      assert.equal((await bob.request('POST', `keys/${alphaKey.id}/rotate`, { grace_seconds: 0 })).status, 404);
      assert.deepEqual((await bob.request('GET', 'batches')).body.data, []);
      assert.equal((await bob.request('GET', `batches/${batch.id}`)).status, 404);
      assert.equal((await bob.request('POST', `batches/${batch.id}/cancel`)).status, 404);
      assert.deepEqual((await bob.request('GET', 'files')).body.data, []);
      assert.equal((await bob.request('GET', `files/${file.id}/content`)).status, 404);
      assert.equal((await bob.request('DELETE', `files/${file.id}`)).status, 404);
      assert.equal(
        (await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${alphaKey.key}` } })).status,
        200,
        'bob revoked nothing',
      );
      const download = await owner.request('GET', `files/${file.id}/content`);
      assert.equal(download.status, 200);
      assert.match(download.headers.get('content-disposition')!, /attachment/);
    });

    test('a set-password link works once; TOTP, once enabled, is required at sign-in', async () => {
      const { linkToken } = await server.runtime.accounts.createOwner({ organization: 'org-gamma', email: 'gus@example.com' });
      const fresh = new DashboardClient(server.origin);
      const set = await fresh.request('POST', 'set-password', { token: linkToken, password: 'a brand new password' });
      assert.equal(set.status, 200);
      fresh.cookie = /switchyard_session=([^;]+)/.exec(set.headers.get('set-cookie')!)?.[1];
      fresh.csrf = set.body.csrf_token;
      const reused = await new DashboardClient(server.origin).request('POST', 'set-password', {
        token: linkToken,
        password: 'another new password',
      });
      assert.equal(reused.status, 401);
      assert.equal(reused.body.error.code, 'invalid_token');

      const enrolment = (await fresh.request('POST', 'totp/enrol')).body;
      assert.match(enrolment.qr_code, /^data:image\/png;base64,/);
      const totp = new TOTP({ secret: Secret.fromBase32(enrolment.secret), digits: 6, period: 30 });
      const password = 'a brand new password';
      assert.equal(
        (await fresh.request('POST', 'totp/enable', { password, code: '000000' === totp.generate() ? '111111' : '000000' })).status,
        400,
      );
      const enabled = await fresh.request('POST', 'totp/enable', { password, code: totp.generate() });
      assert.equal(enabled.status, 200);
      assert.equal(enabled.body.recovery_codes.length, 10);
      const withoutCode = await new DashboardClient(server.origin).signIn('gus@example.com', password);
      assert.equal(withoutCode.body.error.code, 'totp_required');
      // The code that turned TOTP on is used up; the next step's code is accepted.
      const withCode = await new DashboardClient(server.origin).signIn('gus@example.com', password, {
        totp: totp.generate({ timestamp: Date.now() + 30_000 }),
      });
      assert.equal(withCode.status, 200);
    });

    test('models catalogue and the page shell are served; unknown API routes are 404 JSON', async () => {
      const models = await owner.request('GET', 'models');
      assert.ok(models.body.data.some((model: any) => model.id === 'switchyard-echo' && model.capabilities.includes('chat')));
      const page = await fetch(`${server.origin}/dashboard/usage`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type')!, /text\/html/);
      assert.match(page.headers.get('content-security-policy')!, /default-src 'self'/);
      const script = await fetch(`${server.origin}/dashboard/assets/dashboard.js`);
      assert.equal(script.status, 200, 'the front end is built at install (npm run build)');
      const unknown = await owner.request('GET', 'nothing-here');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'not_found');
    });
  });
}
