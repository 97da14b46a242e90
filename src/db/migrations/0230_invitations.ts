/**
 * Migration `0230_invitations`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * Invitations become rows of their own (`invitations`, typed in db/invitations-schema.ts), apart from
 * the accounts: an invitation no longer makes a password-less account, so one to an address that has
 * an account elsewhere looks the same to the inviting owner, and no organization holds an address it
 * invited. The pending invitations of older versions (password-less owner or member accounts of an
 * organization, never signed in and linked to no single sign-on identity) move here with their id,
 * their live link's token hash and its expiry, so an upgrade loses none and their mailed links still work.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id'))
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('invited_by', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.unique())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('invitations_organization').on('invitations').columns(['organization_id', 'state']).execute();
  await db.schema.createIndex('invitations_email').on('invitations').columns(['email', 'state']).execute();
  // One pending invitation per organization and address (inviting it again renews that row).
  await db.schema
    .createIndex('invitations_pending_address')
    .on('invitations')
    .columns(['organization_id', 'email'])
    .unique()
    .where(sql<boolean>`state = 'pending'`)
    .execute();

  // The pending invitations of older versions, moved with their id, live link and expiry.
  await sql`
    insert into invitations (id, organization_id, email, role, invited_by, created_at, expires_at, token_hash, state, updated_at)
    select o.id, o.organization_id, o.email, o.role, null, o.created_at,
      coalesce(
        (select max(l.expires_at) from owner_links l where l.owner_id = o.id and l.used_at is null),
        o.created_at
      ),
      (select l.token_hash from owner_links l where l.owner_id = o.id and l.used_at is null order by l.expires_at desc limit 1),
      'pending', o.created_at
    from owners o
    where o.password_hash is null
      and o.role in ('owner', 'member')
      and o.organization_id <> '_operators'
      and not exists (select 1 from sso_identities s where s.owner_id = o.id)
      and not exists (select 1 from dashboard_sessions d where d.owner_id = o.id)
  `.execute(db);
  await sql`delete from owner_links where owner_id in (select id from invitations)`.execute(db);
  await sql`delete from owner_recovery_codes where owner_id in (select id from invitations)`.execute(db);
  await sql`delete from owners where id in (select id from invitations)`.execute(db);
}
