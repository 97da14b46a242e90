// Budget alerts' storage on every backend (SQLite; Postgres with TEST_DATABASE_URL): an alert fires
// once per budget, period and rule however many writers race for it, and only the inserter queues its
// deliveries (to the organization's owners and the endpoints that take the event, the operators'
// included); the outbox's leases give each due delivery to one claimant at a time, outcomes count only
// under the lease, a failing endpoint's queue is held back, the log pages newest first per audience,
// deleting an endpoint ends its pending deliveries, and old rows are purged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { AlertDeliveriesRepository, type NewDelivery } from '../../src/db/repositories/alert-deliveries-repository.ts';
import { BudgetAlertsRepository, type FiredAlert } from '../../src/db/repositories/budget-alerts-repository.ts';
import { OwnersRepository } from '../../src/db/repositories/owners-repository.ts';
import { WebhookEndpointsRepository } from '../../src/db/repositories/webhook-endpoints-repository.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

const NOW = 1_800_000_000_000;

function alert(budgetId: string, rule: string, overrides: Partial<FiredAlert> = {}): FiredAlert {
  return {
    id: `alert_${budgetId}_${rule}_${Math.random().toString(36).slice(2)}`,
    budgetId,
    periodStart: NOW - 1_000,
    rule,
    organizationId: 'org-store',
    keyId: null,
    scope: 'organization',
    period: 'month',
    periodEnd: NOW + 1_000,
    amountMicroUsd: 1_000_000,
    spentMicroUsd: 800_000,
    thresholdPercent: 80,
    projectedMicroUsd: null,
    requestId: 'req_1',
    createdAt: NOW,
    ...overrides,
  };
}

let sequence = 0;
function delivery(overrides: Partial<NewDelivery> = {}): NewDelivery {
  sequence += 1;
  return {
    id: `msg_${String(sequence).padStart(6, '0')}`,
    alertId: null,
    eventType: 'webhook.test',
    organizationId: 'org-store',
    audienceOrganizationId: 'org-store',
    kind: 'webhook',
    endpointId: 'whep_a',
    target: 'https://hooks.example/a',
    payload: '{}',
    nextAttemptAt: NOW,
    giveUpAt: NOW + 86_400_000,
    createdAt: NOW + sequence,
    ...overrides,
  };
}

for (const backend of storageBackends()) {
  describe(`budget alerts storage on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let alerts: BudgetAlertsRepository;
    let deliveries: AlertDeliveriesRepository;
    let endpoints: WebhookEndpointsRepository;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      alerts = new BudgetAlertsRepository(database.db);
      deliveries = new AlertDeliveriesRepository(database.db);
      endpoints = new WebhookEndpointsRepository(database.db);
      const owners = new OwnersRepository(database.db, database.dialect);
      for (const [id, email, role] of [
        ['own_b', 'b@store.test', 'owner'],
        ['own_a', 'a@store.test', 'owner'],
        ['own_m', 'm@store.test', 'member'],
      ] as const) {
        await owners.createOwner({
          id,
          organizationId: 'org-store',
          email,
          role,
          passwordHash: null,
          createdAt: NOW,
          totpPendingSecret: null,
        } as never);
      }
      const endpoint = (id: string, organizationId: string | null, events: string[]) =>
        endpoints.insert({
          id,
          organizationId,
          url: `https://hooks.example/${id}`,
          description: null,
          events,
          secret: 'whsec_x',
          createdBy: 't',
          createdAt: NOW,
        });
      await endpoint('whep_a', 'org-store', ['budget.threshold_reached']);
      await endpoint('whep_projected_only', 'org-store', ['budget.projected_to_exceed']);
      await endpoint('whep_ops', null, ['budget.threshold_reached', 'budget.projected_to_exceed']);
      await endpoint('whep_other', 'org-other', ['budget.threshold_reached']);
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('one insert per budget, period and rule, however many race; only the inserter queues deliveries', async () => {
      let audiences = 0;
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          alerts.fire(alert('bud_race', 'threshold:80'), 'budget.threshold_reached', (audience) => {
            audiences += 1;
            assert.deepEqual(audience.ownerEmails, ['a@store.test', 'b@store.test']);
            assert.deepEqual(
              audience.endpoints.map((endpoint) => endpoint.id),
              ['whep_a', 'whep_ops'],
            );
            return [delivery({ endpointId: 'whep_a' }), delivery({ endpointId: 'whep_ops', audienceOrganizationId: null })];
          }),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(audiences, 1);
      assert.ok(await alerts.fired('bud_race', NOW - 1_000, 'threshold:80'));
      // Another rule, or the same rule in the next period, fires again.
      assert.equal(await alerts.fire(alert('bud_race', 'threshold:100'), 'budget.threshold_reached', () => []), true);
      assert.equal(
        await alerts.fire(alert('bud_race', 'threshold:80', { periodStart: NOW + 1_000 }), 'budget.threshold_reached', () => []),
        true,
      );
    });

    test('a failed delivery write leaves no alert row behind (one transaction)', async () => {
      const existing = delivery();
      await deliveries.insert(existing);
      await assert.rejects(
        alerts.fire(alert('bud_atomic', 'threshold:50'), 'budget.threshold_reached', () => [delivery({ id: existing.id })]),
        'a duplicate delivery id fails the transaction',
      );
      assert.equal(await alerts.fired('bud_atomic', NOW - 1_000, 'threshold:50'), false);
    });

    test('claims are exclusive while leased, taken over once the lease lapses; outcomes count only under the lease', async () => {
      await database.db.deleteFrom('alert_deliveries').execute();
      for (let index = 0; index < 10; index++) await deliveries.insert(delivery());
      const [first, second] = await Promise.all([deliveries.claim('one', NOW, 1_000, 6), deliveries.claim('two', NOW, 1_000, 6)]);
      const ids = [...first, ...second].map((row) => row.id);
      assert.equal(ids.length, 10);
      assert.equal(new Set(ids).size, 10, 'no delivery claimed twice');
      assert.deepEqual(await deliveries.claim('three', NOW + 500, 1_000, 10), []);
      // Lapsed: `three` takes over one of `one`'s, and `one` can no longer record it.
      const taken = await deliveries.claim('three', NOW + 1_001, 1_000, 1);
      assert.equal(taken.length, 1);
      const holder = first.some((row) => row.id === taken[0]!.id) ? 'one' : 'two';
      assert.equal(await deliveries.delivered(taken[0]!.id, holder, NOW + 1_002, 204), false);
      assert.equal(await deliveries.delivered(taken[0]!.id, 'three', NOW + 1_002, 204), true);
      const done = (await deliveries.find(taken[0]!.id))!;
      assert.deepEqual([done.status, done.attempts, done.lastStatusCode, done.finishedAt], ['delivered', 1, 204, NOW + 1_002]);
    });

    test('a failed attempt is retried or marked failed; a failing endpoint holds back its queue', async () => {
      await database.db.deleteFrom('alert_deliveries').execute();
      const failing = delivery({ endpointId: 'whep_dead' });
      const queued = delivery({ endpointId: 'whep_dead' });
      const elsewhere = delivery({ endpointId: 'whep_alive' });
      for (const row of [failing, queued, elsewhere]) await deliveries.insert(row);
      await deliveries.claim('one', NOW, 1_000, 1);
      const retryAt = NOW + 10_000;
      const status = await deliveries.attemptFailed(failing.id, 'one', NOW, {
        error: 'the endpoint answered HTTP 503',
        statusCode: 503,
        retryAt,
      });
      assert.equal(status, 'pending');
      assert.equal(await deliveries.postponeEndpoint('whep_dead', retryAt, NOW), 1);
      const due = await deliveries.claim('two', NOW + 1, 1_000, 10);
      assert.deepEqual(
        due.map((row) => row.id),
        [elsewhere.id],
      );
      const retried = (await deliveries.find(failing.id))!;
      assert.deepEqual(
        [retried.status, retried.attempts, retried.nextAttemptAt, retried.lastError],
        ['pending', 1, retryAt, 'the endpoint answered HTTP 503'],
      );
      assert.ok((await deliveries.claim('one', retryAt, 1_000, 10)).some((row) => row.id === failing.id));
      assert.equal(
        await deliveries.attemptFailed(failing.id, 'one', retryAt, { error: 'no answer within 10000 ms', statusCode: null, retryAt: null }),
        'failed',
      );
      const failed = (await deliveries.find(failing.id))!;
      assert.deepEqual([failed.status, failed.attempts, failed.finishedAt, failed.lastStatusCode], ['failed', 2, retryAt, null]);
      // Stopping gives back what an instance holds.
      await deliveries.claim('one', retryAt, 60_000, 10);
      assert.ok((await deliveries.releaseHeldBy('one')) >= 1);
      assert.ok((await deliveries.claim('two', retryAt, 1_000, 10)).length >= 1);
    });

    test('the log pages newest first per audience; deleting an endpoint ends its pending deliveries; old rows go', async () => {
      await database.db.deleteFrom('alert_deliveries').execute();
      const rows = [
        delivery({ endpointId: 'whep_a' }),
        delivery({ endpointId: 'whep_ops', audienceOrganizationId: null }),
        delivery({ kind: 'email', endpointId: null, target: 'a@store.test' }),
        delivery({ organizationId: 'org-other', audienceOrganizationId: 'org-other', endpointId: 'whep_other' }),
      ];
      for (const row of rows) await deliveries.insert(row);
      const first = await deliveries.page({ audienceOrganizationId: 'org-store', limit: 1 });
      assert.deepEqual(
        first.map((row) => row.id),
        [rows[2]!.id],
      );
      const next = await deliveries.page({
        audienceOrganizationId: 'org-store',
        limit: 5,
        after: { createdAt: first[0]!.createdAt, id: first[0]!.id },
      });
      assert.deepEqual(
        next.map((row) => row.id),
        [rows[0]!.id],
      );
      assert.equal((await deliveries.page({ limit: 10 })).length, 4, 'operators see every delivery');
      assert.equal((await deliveries.page({ limit: 10, organizationId: 'org-other' })).length, 1);

      assert.equal(await endpoints.delete('whep_a', 'org-other', NOW), false, "another organization's endpoint is not deleted");
      assert.equal(await endpoints.delete('whep_a', 'org-store', NOW + 5), true);
      const ended = (await deliveries.find(rows[0]!.id))!;
      assert.deepEqual([ended.status, ended.lastError, ended.finishedAt], ['failed', 'the endpoint was deleted', NOW + 5]);
      assert.equal(await deliveries.purgeFinishedBefore(NOW + 6, 100), 1);
      assert.equal(await deliveries.find(rows[0]!.id), undefined);
      assert.ok((await alerts.purgeEndedBefore(NOW + 2_000, 100)) >= 1, 'alerts of periods that ended are purged');
      assert.equal(await alerts.fired('bud_race', NOW - 1_000, 'threshold:80'), false);
    });
  });
}
