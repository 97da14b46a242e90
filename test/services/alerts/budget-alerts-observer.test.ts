// The spend observer (services/alerts/budget-alerts.ts) over a real SQLite database: observe() returns
// at once and never throws, even for input it cannot read; while the database refuses its writes (the
// alerts table renamed away here), rules wait in a bounded queue and are written once it answers again,
// each exactly once; a rule once written costs no further write.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../../src/config/index.ts';
import { openDatabase, type Database } from '../../../src/db/database.ts';
import { BudgetAlertsRepository } from '../../../src/db/repositories/budget-alerts-repository.ts';
import { BudgetAlerts } from '../../../src/services/alerts/budget-alerts.ts';
import type { SpendObservation } from '../../../src/services/budgets/spend-observer.ts';
import { createSqliteTestDatabase, type TestDatabase } from '../../support/databases.ts';
import { until } from '../../support/until.ts';

const MAX_PENDING = 50;

function crossing(budgetId: string, spent: number): SpendObservation {
  const start = Date.UTC(2031, 0, 1);
  return {
    requestId: 'req_1',
    organizationId: 'org-obs',
    keyId: 'key_1',
    atMs: start + 30 * 86_400_000,
    budgets: [
      {
        budgetId,
        scope: 'organization',
        organizationId: 'org-obs',
        keyId: null,
        period: 'month',
        periodStartMs: start,
        periodEndMs: Date.UTC(2031, 1, 1),
        amountMicroUsd: 1_000_000,
        spentMicroUsd: spent,
        thresholdsPercent: [50, 80, 100],
      },
    ],
  };
}

describe('the spend observer', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let fires = 0;
  let observer: BudgetAlerts;

  before(async () => {
    testDatabase = await createSqliteTestDatabase();
    database = openDatabase(testDatabase.url);
    await database.migrate();
    const repository = new BudgetAlertsRepository(database.db);
    const counting: Pick<BudgetAlertsRepository, 'fire'> = {
      fire: (...args) => {
        fires += 1;
        return repository.fire(...args);
      },
    };
    const config = loadConfig({ env: {}, overrides: { dataDir: testDatabase.url.slice('sqlite:'.length, -'/test.db'.length) } });
    observer = new BudgetAlerts({
      repository: counting,
      config: config.alerts,
      operator: 'test',
      logger: pino({ level: 'silent' }),
      onQueued: () => undefined,
      maxPending: MAX_PENDING,
    });
  });
  after(async () => {
    await observer.close(1_000);
    await database.close();
    await testDatabase.drop();
  });

  const firedRules = async () =>
    (await database.db.selectFrom('budget_alerts').select(['budget_id', 'rule']).orderBy('budget_id').orderBy('rule').execute()).map(
      (row) => `${row.budget_id} ${row.rule}`,
    );

  test('input it cannot read is logged, never thrown into the settlement', () => {
    assert.doesNotThrow(() => observer.observe({ requestId: 'r', organizationId: 'o', keyId: 'k', atMs: 0, budgets: null } as never));
    assert.doesNotThrow(() => observer.observe({ ...crossing('bud_bad', 1), budgets: [{ thresholdsPercent: null }] } as never));
  });

  test('while writes fail, rules wait (bounded) and are written once each when the database answers', async () => {
    await sql`ALTER TABLE budget_alerts RENAME TO budget_alerts_away`.execute(database.db);
    const firesBefore = fires;
    observer.observe(crossing('bud_a', 850_000));
    observer.observe(crossing('bud_a', 900_000));
    assert.equal(fires, firesBefore, 'observe() returned before any write began');
    await observer.flush();
    assert.equal(observer.waiting, 2, '50% and 80% wait');
    for (let index = 0; index < MAX_PENDING; index++) observer.observe(crossing(`bud_flood_${index}`, 500_000));
    assert.equal(observer.waiting, MAX_PENDING, 'the queue is bounded');
    await sql`ALTER TABLE budget_alerts_away RENAME TO budget_alerts`.execute(database.db);
    await until(async () => (observer.waiting === 0 ? true : undefined), 'the queue to drain after the database came back');
    const rules = await firedRules();
    assert.deepEqual(
      rules.filter((rule) => rule.startsWith('bud_a ')),
      ['bud_a threshold:50', 'bud_a threshold:80'],
    );
    assert.equal(rules.length, MAX_PENDING, '2 of bud_a and the flood that fitted');
  });

  test('a rule once written costs no further write; the next period fires again', async () => {
    const before = fires;
    for (let index = 0; index < 100; index++) observer.observe(crossing('bud_a', 950_000));
    await observer.flush();
    assert.equal(fires, before, 'no write for rules already written');
    observer.observe(crossing('bud_a', 1_000_000));
    await observer.flush();
    assert.equal(fires, before + 1);
    assert.ok((await firedRules()).includes('bud_a threshold:100'));
  });
});
