/**
 * The dashboard's accounts: owners and members of organizations, their one-time set-password links,
 * server-side sessions, sign-in attempts (throttling), the audit log and each organization's allowed
 * tiers. Secrets never reach this layer: links and sessions are looked up by the SHA-256 of their token.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DashboardSessionsTable, DatabaseSchema, OwnersTable } from '../schema.ts';

/** `operator`: runs the service for every organization (the operator console; reserved organization `_operators`). */
export type OwnerRole = 'owner' | 'member' | 'operator';

export interface OwnerRecord {
  id: string;
  organizationId: string;
  email: string;
  role: OwnerRole;
  passwordHash: string | null;
  totpSecret: string | null;
  createdAt: number;
}

export interface SessionRecord {
  id: string;
  ownerId: string;
  organizationId: string;
  userAgent: string | null;
  address: string | null;
  createdAt: number;
  lastSeenAt: number;
  idleExpiresAt: number;
  absoluteExpiresAt: number;
  revokedAt: number | null;
}

export interface AuditEntry {
  id: number;
  organizationId: string;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  createdAt: number;
}

function toOwner(row: Selectable<OwnersTable>): OwnerRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role === 'member' || row.role === 'operator' ? row.role : 'owner',
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    createdAt: Number(row.created_at),
  };
}

function toSession(row: Selectable<DashboardSessionsTable>): SessionRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    organizationId: row.organization_id,
    userAgent: row.user_agent,
    address: row.address,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
    idleExpiresAt: Number(row.idle_expires_at),
    absoluteExpiresAt: Number(row.absolute_expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export class OwnersRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Creates the organization if needed (with `allowedTiers` when given), then the owner. */
  async createOwner(
    owner: Omit<OwnerRecord, 'passwordHash' | 'totpSecret'> & { passwordHash: string | null },
    allowedTiers?: string[],
  ): Promise<OwnerRecord> {
    await this.db.transaction().execute(async (transaction) => {
      await transaction
        .insertInto('organizations')
        .values({
          id: owner.organizationId,
          name: owner.organizationId,
          created_at: owner.createdAt,
          allowed_tiers: allowedTiers === undefined ? null : JSON.stringify(allowedTiers),
        })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .execute();
      if (allowedTiers !== undefined) {
        await transaction
          .updateTable('organizations')
          .set({ allowed_tiers: JSON.stringify(allowedTiers) })
          .where('id', '=', owner.organizationId)
          .execute();
      }
      await transaction
        .insertInto('owners')
        .values({
          id: owner.id,
          organization_id: owner.organizationId,
          email: owner.email,
          role: owner.role,
          password_hash: owner.passwordHash,
          totp_secret: null,
          created_at: owner.createdAt,
        })
        .execute();
    });
    return { ...owner, totpSecret: null };
  }

  async findOwnerByEmail(email: string): Promise<OwnerRecord | undefined> {
    const row = await this.db.selectFrom('owners').selectAll().where('email', '=', email).executeTakeFirst();
    return row === undefined ? undefined : toOwner(row);
  }

  async findOwnerById(id: string): Promise<OwnerRecord | undefined> {
    const row = await this.db.selectFrom('owners').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toOwner(row);
  }

  async countOwners(organizationId: string): Promise<number> {
    const row = await this.db
      .selectFrom('owners')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async setPasswordHash(ownerId: string, passwordHash: string): Promise<void> {
    await this.db.updateTable('owners').set({ password_hash: passwordHash }).where('id', '=', ownerId).execute();
  }

  async setTotpSecret(ownerId: string, secret: string | null): Promise<void> {
    await this.db.updateTable('owners').set({ totp_secret: secret }).where('id', '=', ownerId).execute();
  }

  /** Tier names the organization's owners may give keys; undefined when the operator set none. */
  async allowedTiers(organizationId: string): Promise<string[] | undefined> {
    const row = await this.db.selectFrom('organizations').select('allowed_tiers').where('id', '=', organizationId).executeTakeFirst();
    if (row === undefined || row.allowed_tiers === null) return undefined;
    return JSON.parse(row.allowed_tiers) as string[];
  }

  async createLink(link: { tokenHash: string; ownerId: string; createdAt: number; expiresAt: number }): Promise<void> {
    await this.db
      .insertInto('owner_links')
      .values({ token_hash: link.tokenHash, owner_id: link.ownerId, created_at: link.createdAt, expires_at: link.expiresAt, used_at: null })
      .execute();
  }

  /** Marks an unused, unexpired link used and returns its owner id; undefined otherwise. Atomic. */
  async consumeLink(tokenHash: string, now: number): Promise<string | undefined> {
    const row = await this.db
      .updateTable('owner_links')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('owner_id')
      .executeTakeFirst();
    return row?.owner_id;
  }

  async createSession(session: SessionRecord & { tokenHash: string }): Promise<void> {
    await this.db
      .insertInto('dashboard_sessions')
      .values({
        id: session.id,
        token_hash: session.tokenHash,
        owner_id: session.ownerId,
        organization_id: session.organizationId,
        user_agent: session.userAgent,
        address: session.address,
        created_at: session.createdAt,
        last_seen_at: session.lastSeenAt,
        idle_expires_at: session.idleExpiresAt,
        absolute_expires_at: session.absoluteExpiresAt,
        revoked_at: null,
      })
      .execute();
  }

  async findSessionByTokenHash(tokenHash: string): Promise<SessionRecord | undefined> {
    const row = await this.db.selectFrom('dashboard_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row === undefined ? undefined : toSession(row);
  }

  async touchSession(id: string, lastSeenAt: number, idleExpiresAt: number): Promise<void> {
    await this.db
      .updateTable('dashboard_sessions')
      .set({ last_seen_at: lastSeenAt, idle_expires_at: idleExpiresAt })
      .where('id', '=', id)
      .execute();
  }

  /** Active (unrevoked, unexpired) sessions of an owner, newest first. */
  async listSessions(ownerId: string, now: number): Promise<SessionRecord[]> {
    const rows = await this.db
      .selectFrom('dashboard_sessions')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('revoked_at', 'is', null)
      .where('idle_expires_at', '>', now)
      .where('absolute_expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map(toSession);
  }

  /** Revokes one of the owner's sessions (all of them when `sessionId` is undefined); returns how many. */
  async revokeSessions(ownerId: string, now: number, sessionId?: string): Promise<number> {
    let query = this.db
      .updateTable('dashboard_sessions')
      .set({ revoked_at: now })
      .where('owner_id', '=', ownerId)
      .where('revoked_at', 'is', null);
    if (sessionId !== undefined) query = query.where('id', '=', sessionId);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async recordAttempt(subject: string, succeeded: boolean, now: number): Promise<void> {
    await this.db
      .insertInto('sign_in_attempts')
      .values({ subject, succeeded: succeeded ? 1 : 0, created_at: now })
      .execute();
  }

  /** Failed attempts of a subject since `sinceMs` that came after its last success. */
  async recentFailures(subject: string, sinceMs: number): Promise<number> {
    const lastSuccess = await this.db
      .selectFrom('sign_in_attempts')
      .select((eb) => eb.fn.max<number>('created_at').as('at'))
      .where('subject', '=', subject)
      .where('succeeded', '=', 1)
      .where('created_at', '>=', sinceMs)
      .executeTakeFirst();
    const from = Math.max(sinceMs, lastSuccess?.at === null || lastSuccess?.at === undefined ? 0 : Number(lastSuccess.at) + 1);
    const row = await this.db
      .selectFrom('sign_in_attempts')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('subject', '=', subject)
      .where('succeeded', '=', 0)
      .where('created_at', '>=', from)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({
        organization_id: entry.organizationId,
        actor: entry.actor,
        action: entry.action,
        target: entry.target,
        address: entry.address,
        created_at: entry.createdAt,
      })
      .execute();
  }

  /** The organization's audit entries, newest first. */
  async listAudit(organizationId: string, limit: number): Promise<AuditEntry[]> {
    const rows = await this.db
      .selectFrom('audit_log')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: Number(row.id),
      organizationId: row.organization_id,
      actor: row.actor,
      action: row.action,
      target: row.target,
      address: row.address,
      createdAt: Number(row.created_at),
    }));
  }
}
