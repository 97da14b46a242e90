// Invitations' storage on every backend (SQLite; Postgres with TEST_DATABASE_URL), issue 40 item 4
// bullet 2: an invitation is a row of its own whatever its address is; its link makes the account
// only when used, once, and never for an address that has an account; a newer link, a revocation or
// the expiry voids the older link; an organization has one pending invitation per address (racing
// invitations renew one row); two organizations may invite one address and the first accepted
// voids the other (also when both are accepted at the same moment); and migration 0230 moves an older
// version's pending invitation (a password-less account) with its id and live link, leaving operators,
// single sign-on accounts and accounts with a password where they are. Retention deletes closed
// invitations past their age and keeps pending ones.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { pino } from 'pino';
import { AccountsRetention } from '../../src/accounts/accounts-retention.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createMigrations } from '../../src/db/migrations/index.ts';
import type { InvitationsRepository } from '../../src/db/repositories/invitations-repository.ts';
import { OwnersRepository } from '../../src/db/repositories/owners-repository.ts';
import { createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;
const hash = (token: string): string => createHash('sha256').update(token).digest('hex');

for (const backend of storageBackends()) {
  describe(`invitations storage on ${backend}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let owners: OwnersRepository;
    let invitations: InvitationsRepository;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      database = openDatabase(testDatabase.url);
      await database.migrate();
      owners = new OwnersRepository(database.db, database.dialect);
      invitations = owners.invitations;
      for (const [organizationId, email] of [
        ['org-a', 'owner@a.test'],
        ['org-b', 'owner@b.test'],
      ] as const)
        await owners.createOwner({ id: `own_${organizationId}`, organizationId, email, role: 'owner', passwordHash: 'x', createdAt: NOW });
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    const invite = (id: string, organizationId: string, email: string, token: string, expiresAt = NOW + DAY) =>
      invitations.create({
        id,
        organizationId,
        email,
        role: 'member',
        invitedBy: 'owner@x.test',
        tokenHash: hash(token),
        expiresAt,
        now: NOW,
      });

    test('an invitation is a row, not an account; its link makes the account once', async () => {
      await invite('own_inv1', 'org-a', 'new@x.test', 'tok-1');
      assert.equal(await owners.findOwnerByEmail('new@x.test'), undefined);
      assert.deepEqual(
        (await invitations.listPending('org-a')).map((row) => [row.id, row.email, row.role, row.invitedBy, row.state]),
        [['own_inv1', 'new@x.test', 'member', 'owner@x.test', 'pending']],
      );
      assert.equal(await invitations.accept(hash('tok-1'), NOW + DAY), undefined, 'expired');
      assert.equal(await invitations.accept(hash('tok-1'), NOW + 1), 'own_inv1');
      const account = await owners.findOwnerById('own_inv1');
      assert.deepEqual(
        [account?.organizationId, account?.email, account?.role, account?.passwordHash],
        ['org-a', 'new@x.test', 'member', null],
      );
      assert.equal(await invitations.accept(hash('tok-1'), NOW + 2), undefined, 'used');
      assert.deepEqual(await invitations.listPending('org-a'), []);
    });

    test('a newer link voids the older one; a revoked invitation is no longer listed and its link does nothing', async () => {
      await invite('own_inv2', 'org-a', 'renew@x.test', 'tok-2a');
      assert.equal(
        await invitations.renew('own_inv2', {
          role: 'owner',
          invitedBy: 'owner@a.test',
          tokenHash: hash('tok-2b'),
          expiresAt: NOW + DAY,
          now: NOW,
        }),
        true,
      );
      assert.equal((await invitations.findPending('org-a', 'own_inv2'))?.role, 'owner');
      assert.equal(await invitations.findPending('org-b', 'own_inv2'), undefined, 'another organization does not see it');
      assert.equal(await invitations.accept(hash('tok-2a'), NOW + 1), undefined);
      await invitations.revoke('own_inv2', NOW + 1);
      assert.equal(await invitations.accept(hash('tok-2b'), NOW + 2), undefined);
      assert.equal(await invitations.findPendingByEmail('org-a', 'renew@x.test'), undefined);
      assert.equal(await owners.findOwnerByEmail('renew@x.test'), undefined);
    });

    test('one pending invitation per organization and address: opening it again (also racing) renews the row', async () => {
      const open = (id: string, token: string) =>
        invitations.open({
          id,
          organizationId: 'org-a',
          email: 'once@x.test',
          role: 'member',
          invitedBy: null,
          tokenHash: hash(token),
          expiresAt: NOW + DAY,
          now: NOW,
        });
      const opened = await Promise.all([open('own_once1', 'tok-7a'), open('own_once2', 'tok-7b'), open('own_once3', 'tok-7c')]);
      const rows = (await invitations.listPending('org-a')).filter((row) => row.email === 'once@x.test');
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.ok(
        opened.every((row) => row.id === rows[0]!.id),
        JSON.stringify(opened),
      );
      const again = await open('own_once4', 'tok-7d');
      assert.equal(again.id, rows[0]!.id);
      for (const token of ['tok-7a', 'tok-7b', 'tok-7c']) assert.equal(await invitations.accept(hash(token), NOW + 1), undefined, token);
      assert.equal(await invitations.accept(hash('tok-7d'), NOW + 1), rows[0]!.id, 'only the newest link works');
    });

    test('an address with an account elsewhere: the link does nothing and the invitation stays as it was', async () => {
      await invite('own_inv3', 'org-b', 'owner@a.test', 'tok-3');
      assert.equal(await invitations.accept(hash('tok-3'), NOW + 1), undefined);
      assert.equal((await owners.findOwnerByEmail('owner@a.test'))?.organizationId, 'org-a');
      assert.equal((await invitations.findPending('org-b', 'own_inv3'))?.state, 'pending');
    });

    test('two organizations invite one address: the first accepted wins, the other is voided', async () => {
      await invite('own_inv4a', 'org-a', 'shared@x.test', 'tok-4a');
      await invite('own_inv4b', 'org-b', 'shared@x.test', 'tok-4b');
      assert.equal(await invitations.accept(hash('tok-4b'), NOW + 1), 'own_inv4b');
      assert.equal((await owners.findOwnerByEmail('shared@x.test'))?.organizationId, 'org-b');
      assert.equal(await invitations.findPending('org-a', 'own_inv4a'), undefined);
      const state = await database.db.selectFrom('invitations').select('state').where('id', '=', 'own_inv4a').executeTakeFirstOrThrow();
      assert.equal(state.state, 'voided');
      assert.equal(await invitations.accept(hash('tok-4a'), NOW + 2), undefined);
    });

    test('both invitations accepted at the same moment: one account, the other link does nothing', async () => {
      await invite('own_inv5a', 'org-a', 'race@x.test', 'tok-5a');
      await invite('own_inv5b', 'org-b', 'race@x.test', 'tok-5b');
      const results = await Promise.all([invitations.accept(hash('tok-5a'), NOW + 1), invitations.accept(hash('tok-5b'), NOW + 1)]);
      assert.equal(results.filter((result) => result !== undefined).length, 1, JSON.stringify(results));
      const account = await owners.findOwnerByEmail('race@x.test');
      assert.equal(
        account?.id,
        results.find((result) => result !== undefined),
      );
    });

    test('retention deletes closed invitations past their age, never a pending one', async () => {
      await invite('own_old_pending', 'org-b', 'old-pending@x.test', 'tok-6a', NOW + 1);
      await invite('own_old_revoked', 'org-b', 'old-revoked@x.test', 'tok-6b');
      await invitations.revoke('own_old_revoked', NOW);
      const retention = new AccountsRetention(owners, pino({ level: 'silent' }), { now: () => NOW + 31 * DAY, batchSize: 1 });
      const result = await retention.pruneOnce();
      assert.ok(result.invitations >= 1, JSON.stringify(result));
      const left = await database.db.selectFrom('invitations').select(['id', 'state']).execute();
      assert.ok(!left.some((row) => row.id === 'own_old_revoked'));
      assert.ok(
        left.some((row) => row.id === 'own_old_pending'),
        'a pending invitation stays (it can be sent again)',
      );
      assert.ok(
        left.every((row) => row.state === 'pending'),
        JSON.stringify(left),
      );
    });

    test('migration 0230 moves an older pending invitation with its id and live link; other password-less accounts stay', async () => {
      const older = await createTestDatabase(backend);
      const opened = openDatabase(older.url);
      try {
        const migrator = new Migrator({ db: opened.db, provider: { getMigrations: async () => createMigrations(backend) } });
        assert.equal((await migrator.migrateTo('0220_single_sign_on')).error, undefined);
        const db = opened.db;
        await sql`insert into organizations (id, name, created_at) values ('org-old', 'org-old', 1)`.execute(db);
        const owner = (id: string, organization: string, email: string, role: string, password: string | null) =>
          sql`insert into owners (id, organization_id, email, role, password_hash, created_at) values (${id}, ${organization}, ${email}, ${role}, ${password}, ${NOW - 10})`.execute(
            db,
          );
        await owner('own_pending', 'org-old', 'pending@old.test', 'owner', null);
        await owner('own_member', 'org-old', 'member@old.test', 'member', 'scrypt$x');
        await owner('own_sso', 'org-old', 'sso@old.test', 'member', null);
        await owner('own_operator', '_operators', 'op@old.test', 'operator', null);
        const link = (token: string, ownerId: string, usedAt: number | null, expiresAt: number) =>
          sql`insert into owner_links (token_hash, owner_id, created_at, expires_at, used_at) values (${hash(token)}, ${ownerId}, ${NOW - 10}, ${expiresAt}, ${usedAt})`.execute(
            db,
          );
        await link('old-used', 'own_pending', NOW - 5, NOW + DAY - 10);
        await link('old-live', 'own_pending', null, NOW + DAY);
        await link('op-live', 'own_operator', null, NOW + DAY);
        await sql`insert into sso_identities (provider, subject, owner_id, email, created_at, last_sign_in_at) values ('idp', 'sub', 'own_sso', 'sso@old.test', 1, 1)`.execute(
          db,
        );

        await opened.migrate();

        const moved = new OwnersRepository(db, opened.dialect);
        assert.deepEqual(
          (await moved.invitations.listPending('org-old')).map((row) => [row.id, row.email, row.role, row.invitedBy, row.expiresAt]),
          [['own_pending', 'pending@old.test', 'owner', null, NOW + DAY]],
        );
        assert.equal(await moved.findOwnerById('own_pending'), undefined, 'no longer an account');
        for (const id of ['own_member', 'own_sso', 'own_operator']) assert.ok(await moved.findOwnerById(id), id);
        assert.equal(await moved.consumeLink(hash('op-live'), NOW), 'own_operator', "the operator's link still works");
        // The invitation's mailed link still works, now as an invitation's: it makes the account.
        assert.equal(await moved.invitations.accept(hash('old-used'), NOW), undefined);
        assert.equal(await moved.invitations.accept(hash('old-live'), NOW), 'own_pending');
        assert.equal((await moved.findOwnerById('own_pending'))?.role, 'owner');
      } finally {
        await opened.close();
        await older.drop();
      }
    });
  });
}
