/**
 * Migration `0220_single_sign_on`. Its name is what databases record: never rename it, never edit it once applied.
 *
 * OpenID Connect single sign-on (db/sso-schema.ts): `sso_identities`, the link between a provider's
 * subject and a dashboard account (one account per provider subject); and `sso_pending_sign_ins`, the
 * sign-ins started and not yet finished (state, nonce, PKCE verifier), kept in the shared database so a
 * sign-in started on one instance finishes on another, taken once (deleted as it is read) and bounded
 * in time (`expires_at`, purged as new ones start) and in number per address (`address`).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_identities')
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('owner_id', 'text', (column) => column.notNull().references('owners.id').onDelete('cascade'))
    .addColumn('email', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_sign_in_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('sso_identities_key', ['provider', 'subject'])
    .execute();
  await db.schema.createIndex('sso_identities_owner').on('sso_identities').column('owner_id').execute();
  await db.schema
    .createTable('sso_pending_sign_ins')
    .addColumn('state_hash', 'text', (column) => column.primaryKey())
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('nonce', 'text', (column) => column.notNull())
    .addColumn('code_verifier', 'text', (column) => column.notNull())
    .addColumn('browser_hash', 'text', (column) => column.notNull())
    .addColumn('redirect_uri', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sso_pending_sign_ins_expires').on('sso_pending_sign_ins').column('expires_at').execute();
  await db.schema.createIndex('sso_pending_sign_ins_address').on('sso_pending_sign_ins').columns(['address', 'expires_at']).execute();
}
