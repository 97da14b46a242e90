/**
 * The people of an organization as its owners and the operator manage them: list, change a role,
 * remove (their sessions and links go with them, so their next request is refused), end every other
 * session after a password change. Sign-in, sessions and links themselves are owners-repository.ts.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';
import type { AccountRole } from './owners-repository.ts';

export interface PersonRecord {
  id: string;
  organizationId: string;
  email: string;
  role: AccountRole;
  /** False until the set-password link was used. */
  passwordSet: boolean;
  /** A pending invitation (invitations-repository.ts): no account until its link is used. */
  invitation: boolean;
  totpEnabled: boolean;
  /** Milliseconds since epoch. */
  createdAt: number;
  /** Last use of any of their sessions, milliseconds since epoch, or null. */
  lastSeenAt: number | null;
}

export class PeopleRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** The organization's people (`operators` for the operators' organization), by email. */
  async list(organizationId: string): Promise<PersonRecord[]> {
    const rows = await this.db
      .selectFrom('owners')
      .select(['id', 'organization_id', 'email', 'role', 'password_hash', 'totp_secret', 'created_at'])
      .select((eb) =>
        eb
          .selectFrom('dashboard_sessions')
          .select((inner) => inner.fn.max<number>('last_seen_at').as('last'))
          .whereRef('dashboard_sessions.owner_id', '=', 'owners.id')
          .as('last_seen_at'),
      )
      .where('organization_id', '=', organizationId)
      .orderBy('email')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      organizationId: row.organization_id,
      email: row.email,
      role: row.role === 'member' || row.role === 'operator' ? row.role : 'owner',
      passwordSet: row.password_hash !== null,
      invitation: false,
      totpEnabled: row.totp_secret !== null,
      createdAt: Number(row.created_at),
      lastSeenAt: row.last_seen_at === null || row.last_seen_at === undefined ? null : Number(row.last_seen_at),
    }));
  }

  async countOwners(organizationId: string): Promise<number> {
    const row = await this.db
      .selectFrom('owners')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async setRole(id: string, role: AccountRole): Promise<void> {
    await this.db.updateTable('owners').set({ role }).where('id', '=', id).execute();
  }

  /** Removes the person with their sessions and links, in one transaction. */
  async remove(id: string): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      await transaction.deleteFrom('dashboard_sessions').where('owner_id', '=', id).execute();
      await transaction.deleteFrom('owner_links').where('owner_id', '=', id).execute();
      await transaction.deleteFrom('owners').where('id', '=', id).execute();
    });
  }

  /** Ends every session of the person but `keepSessionId`; returns how many. */
  async revokeOtherSessions(ownerId: string, keepSessionId: string, now: number): Promise<number> {
    const result = await this.db
      .updateTable('dashboard_sessions')
      .set({ revoked_at: now })
      .where('owner_id', '=', ownerId)
      .where('id', '!=', keepSessionId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
