/**
 * The cap on active API keys per organization (issue 37 item 5): a Free organization's next key past
 * its plan's cap is refused (KeyService, the dashboard, the CLI's service) with 403 `key_limit_reached`;
 * revoking or an operator's override makes room; rotation replaces a key at the cap; 100 concurrent
 * creates stop exactly at the cap, on SQLite and on Postgres through two instances (TEST_DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/accounts/organizations.ts';
import { isServiceError, type ServiceError } from '../../src/core/service-error.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery staple';

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

/** Creates `count` keys of `organization` at once; answers how many were created and the refusals. */
async function createConcurrently(servers: TestServer[], organization: string, count: number) {
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, (_unused, index) =>
      servers[index % servers.length]!.runtime.keys.create({ organization, tier: 'Free', name: `burst-${index}` }),
    ),
  );
  const refused = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason as unknown);
  return { created: outcomes.filter((outcome) => outcome.status === 'fulfilled').length, refused };
}

describe('key cap: a Free organization (SQLite)', () => {
  let server: TestServer;
  const dashboard = (): DashboardClient => new DashboardClient(server.origin);

  before(async () => {
    server = await startTestServer();
    await createOwner(server.runtime, 'free-co', 'owner@free.test', PASSWORD, { allowedTiers: ['Free'] });
  });
  after(() => server.close());

  test('the plan carries the cap: Free allows 10 active keys', async () => {
    const plan = await server.runtime.organizations.planOf('free-co');
    assert.equal(plan?.tier, 'Free');
    assert.equal(plan?.maxActiveKeys, 10);
  });

  test('the 11th key is refused with 403 key_limit_reached; the dashboard shows 10 of 10 and refuses too', async () => {
    for (let index = 0; index < 10; index++) await server.runtime.keys.create({ organization: 'free-co', tier: 'Free' });
    const error = await refusal(server.runtime.keys.create({ organization: 'free-co', tier: 'Free' }));
    assert.equal(error.status, 403);
    assert.equal(error.type, 'permission_error');
    assert.equal(error.code, 'key_limit_reached');
    assert.deepEqual(error.details, { limit: 10, active: 10 });
    assert.match(error.message, /10 active API keys.*Free.*Revoke/);

    const client = dashboard();
    assert.equal((await client.signIn('owner@free.test', PASSWORD)).status, 200);
    const limits = await client.request('GET', 'limits');
    assert.equal(limits.status, 200);
    assert.deepEqual(limits.body.keys, { active: 10, limit: 10 });
    const created = await client.request('POST', 'keys', { name: 'one too many' });
    assert.equal(created.status, 403);
    assert.equal(created.body.error.type, 'permission_error');
    assert.equal(created.body.error.code, 'key_limit_reached');
    assert.deepEqual(created.body.error.details, { limit: 10, active: 10 });
    assert.equal((await server.runtime.keys.allowance('free-co')).active, 10);
  });

  test('rotation at the cap replaces the key; revoking one makes room for exactly one more', async () => {
    const [first, second] = await server.runtime.keys.list('free-co');
    const rotated = await server.runtime.keys.rotate(first!.id, 60_000);
    assert.notEqual(rotated.created.record.id, first!.id);
    await server.runtime.keys.revoke(second!.id);
    const client = dashboard();
    await client.signIn('owner@free.test', PASSWORD);
    // The rotated key still works during its grace period, so it counts: the organization holds 10 + 1 - 1.
    assert.deepEqual((await client.request('GET', 'limits')).body.keys, { active: 10, limit: 10 });
    await server.runtime.keys.revoke(first!.id);
    assert.equal((await client.request('POST', 'keys', { name: 'room again' })).status, 201);
    assert.equal((await client.request('POST', 'keys', { name: 'and no more' })).status, 403);
  });

  test("an operator's override raises the cap; 0 lifts it; a bad figure is a 400 naming it", async () => {
    const organizations = server.runtime.organizations;
    await organizations.setPlan('free-co', 'Free', { maxActiveKeys: 11 }, CLI_ACTOR);
    await server.runtime.keys.create({ organization: 'free-co', tier: 'Free' });
    assert.equal((await refusal(server.runtime.keys.create({ organization: 'free-co', tier: 'Free' }))).code, 'key_limit_reached');
    await organizations.setPlan('free-co', 'Free', { maxActiveKeys: 0 }, CLI_ACTOR);
    await server.runtime.keys.create({ organization: 'free-co', tier: 'Free' });
    assert.deepEqual(await server.runtime.keys.allowance('free-co'), { active: 12, limit: 0 });
    const bad = await refusal(organizations.setPlan('free-co', 'Free', { maxActiveKeys: -1 }, CLI_ACTOR));
    assert.equal(bad.status, 400);
    assert.equal(bad.param, 'overrides.maxActiveKeys');
    await organizations.setPlan('free-co', 'Free', null, CLI_ACTOR);
  });

  test('100 concurrent creates in a new Free organization stop exactly at the cap', async () => {
    await createOwner(server.runtime, 'burst-co', 'owner@burst.test', PASSWORD, { allowedTiers: ['Free'] });
    const { created, refused } = await createConcurrently([server], 'burst-co', 100);
    assert.equal(created, 10);
    assert.equal(refused.length, 90);
    assert.ok(refused.every((error) => isServiceError(error) && error.code === 'key_limit_reached'));
    assert.equal((await server.runtime.keys.allowance('burst-co')).active, 10);
  });
});

describe('key cap on Postgres through two instances', () => {
  let database: TestDatabase | undefined;
  const servers: TestServer[] = [];

  before(async () => {
    database = await createPostgresTestDatabase();
    if (database === undefined) return;
    for (let index = 0; index < 2; index++) servers.push(await startTestServer({ config: { databaseUrl: database.url } }));
  });
  after(async () => {
    for (const server of servers) await server.close();
    await database?.drop();
  });

  test('100 concurrent creates split over two instances stop exactly at the cap', async (context) => {
    if (database === undefined) {
      console.warn('SKIPPED: key cap on Postgres needs TEST_DATABASE_URL');
      context.skip('TEST_DATABASE_URL is not set');
      return;
    }
    await createOwner(servers[0]!.runtime, 'pg-burst', 'owner@pg-burst.test', PASSWORD, { allowedTiers: ['Free'] });
    const { created, refused } = await createConcurrently(servers, 'pg-burst', 100);
    const unexpected = refused.filter((error) => !(isServiceError(error) && error.code === 'key_limit_reached'));
    assert.deepEqual(unexpected, []);
    assert.equal(created, 10);
    assert.equal(refused.length, 90);
    assert.ok(refused.every((error) => isServiceError(error) && error.code === 'key_limit_reached'));
    assert.equal((await servers[1]!.runtime.keys.allowance('pg-burst')).active, 10);
  });
});
