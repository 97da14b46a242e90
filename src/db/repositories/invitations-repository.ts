/**
 * Invitations to an organization (migration 0230), apart from the accounts: each is one row whatever
 * its address is; the account is made only when the link is used (`accept`), and the first accepted
 * invitation to an address voids the others. Links are looked up by the SHA-256 of their token.
 */
import type { Kysely, Selectable } from 'kysely';
import type { InvitationsTable } from '../invitations-schema.ts';
import type { DatabaseSchema } from '../schema.ts';

export interface InvitationRecord {
  id: string;
  organizationId: string;
  email: string;
  role: 'owner' | 'member';
  /** The inviter's email, or null (moved from an older version's pending account). */
  invitedBy: string | null;
  createdAt: number;
  /** When the current link stops working. */
  expiresAt: number;
  state: 'pending' | 'accepted' | 'revoked' | 'voided';
}

function toInvitation(row: Selectable<InvitationsTable>): InvitationRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role === 'owner' ? 'owner' : 'member',
    invitedBy: row.invited_by,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    state: row.state === 'accepted' || row.state === 'revoked' || row.state === 'voided' ? row.state : 'pending',
  };
}

/** A new link for an invitation: the role asked now, who asked, the token's hash and its expiry. */
export interface InvitationLink {
  role: 'owner' | 'member';
  invitedBy: string | null;
  tokenHash: string;
  expiresAt: number;
  now: number;
}

export class InvitationsRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    /** On Postgres an acceptance locks the address's pending invitations first (SQLite runs one transaction at a time). */
    private readonly postgres = false,
  ) {}

  async create(invitation: { id: string; organizationId: string; email: string } & InvitationLink): Promise<InvitationRecord> {
    await this.db
      .insertInto('invitations')
      .values({
        id: invitation.id,
        organization_id: invitation.organizationId,
        email: invitation.email,
        role: invitation.role,
        invited_by: invitation.invitedBy,
        created_at: invitation.now,
        expires_at: invitation.expiresAt,
        token_hash: invitation.tokenHash,
        state: 'pending',
        updated_at: invitation.now,
      })
      .execute();
    return {
      id: invitation.id,
      organizationId: invitation.organizationId,
      email: invitation.email,
      role: invitation.role,
      invitedBy: invitation.invitedBy,
      createdAt: invitation.now,
      expiresAt: invitation.expiresAt,
      state: 'pending',
    };
  }

  /**
   * The organization's pending invitation to the address with a new link (and role), or a new one with
   * `invitation.id` when it has none. One pending invitation per organization and address (a partial
   * unique index): of two racing to create it, the second renews the first's row.
   */
  async open(invitation: { id: string; organizationId: string; email: string } & InvitationLink): Promise<InvitationRecord> {
    for (let attempt = 0; ; attempt++) {
      const pending = await this.findPendingByEmail(invitation.organizationId, invitation.email);
      if (pending !== undefined && (await this.renew(pending.id, invitation)))
        return { ...pending, role: invitation.role, expiresAt: invitation.expiresAt };
      try {
        return await this.create(invitation);
      } catch (error) {
        if (attempt > 0 || !isUniqueViolation(error)) throw error;
      }
    }
  }

  /** The organization's pending invitation to `email` (expired links included: it can be sent again). */
  async findPendingByEmail(organizationId: string, email: string): Promise<InvitationRecord | undefined> {
    const row = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('email', '=', email)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return row === undefined ? undefined : toInvitation(row);
  }

  /** The organization's pending invitation with this id. */
  async findPending(organizationId: string, id: string): Promise<InvitationRecord | undefined> {
    const row = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return row === undefined ? undefined : toInvitation(row);
  }

  /** The organization's pending invitations, by email. */
  async listPending(organizationId: string): Promise<InvitationRecord[]> {
    const rows = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('state', '=', 'pending')
      .orderBy('email')
      .execute();
    return rows.map(toInvitation);
  }

  /** A new link (and role) for a pending invitation: the older link stops working. False when it is no longer pending. */
  async renew(id: string, link: InvitationLink): Promise<boolean> {
    const result = await this.db
      .updateTable('invitations')
      .set({ role: link.role, invited_by: link.invitedBy, token_hash: link.tokenHash, expires_at: link.expiresAt, updated_at: link.now })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setRole(id: string, role: 'owner' | 'member', now: number): Promise<void> {
    await this.db.updateTable('invitations').set({ role, updated_at: now }).where('id', '=', id).where('state', '=', 'pending').execute();
  }

  /** Revokes a pending invitation: its link stops working at once. */
  async revoke(id: string, now: number): Promise<void> {
    await this.db
      .updateTable('invitations')
      .set({ state: 'revoked', token_hash: null, updated_at: now })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .execute();
  }

  /** Deletes at most `batchSize` invitations accepted, revoked or voided before `beforeMs`; returns how many. */
  async deleteClosedBefore(beforeMs: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('invitations')
      .where('id', 'in', (eb) =>
        eb.selectFrom('invitations').select('id').where('state', '<>', 'pending').where('updated_at', '<', beforeMs).limit(batchSize),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Uses an invitation's link, in one transaction: takes the pending, unexpired invitation (atomically:
   * a second use finds none), makes its account (the invitation's id, organization, email and role, no
   * password yet) and voids the other organizations' pending invitations to the address. Undefined,
   * with nothing changed, when the link is unknown, used, revoked, voided or expired, or the address
   * has an account already (the unique email refuses a racing acceptance too).
   */
  async accept(tokenHash: string, now: number): Promise<string | undefined> {
    try {
      return await this.db.transaction().execute(async (transaction) => {
        const target = await transaction.selectFrom('invitations').select('email').where('token_hash', '=', tokenHash).executeTakeFirst();
        if (target === undefined) return undefined;
        // Every acceptance of the address locks its pending invitations in one order before writing, so
        // two accepted at once wait for each other instead of deadlocking (the second then finds its own voided).
        if (this.postgres)
          await transaction
            .selectFrom('invitations')
            .select('id')
            .where('email', '=', target.email)
            .where('state', '=', 'pending')
            .orderBy('id')
            .forUpdate()
            .execute();
        const taken = await transaction
          .updateTable('invitations')
          .set({ state: 'accepted', token_hash: null, updated_at: now })
          .where('token_hash', '=', tokenHash)
          .where('state', '=', 'pending')
          .where('expires_at', '>', now)
          .returningAll()
          .executeTakeFirst();
        if (taken === undefined) return undefined;
        const existing = await transaction.selectFrom('owners').select('id').where('email', '=', taken.email).executeTakeFirst();
        if (existing !== undefined) throw new AddressTaken();
        await transaction
          .insertInto('owners')
          .values({
            id: taken.id,
            organization_id: taken.organization_id,
            email: taken.email,
            role: taken.role === 'owner' ? 'owner' : 'member',
            password_hash: null,
            totp_secret: null,
            created_at: now,
          })
          .execute();
        await transaction
          .updateTable('invitations')
          .set({ state: 'voided', token_hash: null, updated_at: now })
          .where('email', '=', taken.email)
          .where('state', '=', 'pending')
          .execute();
        return taken.id;
      });
    } catch (error) {
      // The address has an account (found, or inserted by a racing acceptance): the link does nothing.
      if (error instanceof AddressTaken || isUniqueViolation(error)) return undefined;
      throw error;
    }
  }
}

/** Rolls the acceptance back: the address has an account already. */
class AddressTaken extends Error {}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
