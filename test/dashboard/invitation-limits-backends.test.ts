// The invitation limits hold under a burst on every backend (SQLite; Postgres with TEST_DATABASE_URL):
// twelve invitations sent at once by one organization whose limit is four an hour give exactly four
// invitations and eight 429 `too_many_invitations` (on Postgres the count is reserved behind the
// subject's advisory lock, so concurrent requests cannot all read "under the limit"), and exactly four
// pending rows in its People list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccountServices } from '../../src/accounts/account-services.ts';
import { DashboardAccounts } from '../../src/accounts/dashboard-accounts.ts';
import type { PeopleService } from '../../src/accounts/people.ts';
import { loadConfig } from '../../src/config/index.ts';
import { ServiceError } from '../../src/core/service-error.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { OwnersRepository } from '../../src/db/repositories/owners-repository.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

for (const backend of storageBackends()) {
  describe(`invitation limits on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let people: PeopleService;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      const config = loadConfig({ env: {}, overrides: { logLevel: 'silent', invitations: { perHour: 4, perDay: 100 } } });
      const silent = { info: () => undefined, error: () => undefined };
      const owners = new OwnersRepository(database.db, database.dialect);
      await owners.createOwner({
        id: 'own_burst',
        organizationId: 'org-burst',
        email: 'owner@burst.test',
        role: 'owner',
        passwordHash: 'x',
        createdAt: 1,
      });
      people = createAccountServices(config, database.db, silent, database.dialect).people(new DashboardAccounts(owners));
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    test('a burst of invitations passes the hourly limit exactly', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          people.invite('org-burst', `burst${index}@victim.test`, 'member', 'owner@burst.test', 'http://switchyard.test').then(
            () => 'sent',
            (error: unknown) => (error instanceof ServiceError ? `${error.status} ${error.code}` : String(error)),
          ),
        ),
      );
      assert.deepEqual(
        outcomes.sort(),
        [...Array<string>(8).fill('429 too_many_invitations'), ...Array<string>(4).fill('sent')],
        JSON.stringify(outcomes),
      );
      assert.equal((await people.list('org-burst')).filter((person) => person.invitation).length, 4);
    });
  });
}
