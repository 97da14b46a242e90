/**
 * The dashboard's accounts: owners and members of organizations, their one-time set-password links,
 * server-side sessions, sign-in attempts (throttling), the audit log and each organization's allowed
 * tiers. Secrets never reach this layer: links and sessions are looked up by the SHA-256 of their token.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DashboardSessionsTable, DatabaseSchema, OwnersTable } from '../schema.ts';
import { InvitationsRepository } from './invitations-repository.ts';
import { SecondFactorRepository } from './second-factor-repository.ts';
import { containsText } from './text-search.ts';
import { SignInAttemptsRepository } from './sign-in-attempts-repository.ts';

/** `operator`: runs the service for every organization (the operator console; reserved organization `_operators`). */
export type AccountRole = 'owner' | 'member' | 'operator';

export interface AccountRecord {
  id: string;
  organizationId: string;
  email: string;
  role: AccountRole;
  passwordHash: string | null;
  totpSecret: string | null;
  /** The last accepted TOTP time step, or null. */
  totpLastStep: number | null;
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
  /** How many times it happened (failed sign-ins are aggregated per account and window). */
  occurrences: number;
}

function toOwner(row: Selectable<OwnersTable>): AccountRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role === 'member' || row.role === 'operator' ? row.role : 'owner',
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    totpLastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
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
  /** The sign-in throttle's attempts. */
  readonly attempts: SignInAttemptsRepository;
  /** TOTP secrets, last steps and recovery codes. */
  readonly secondFactor: SecondFactorRepository;
  /** Invitations, whose accepted links make accounts (invitations-repository.ts). */
  readonly invitations: InvitationsRepository;

  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    dialect: 'sqlite' | 'postgres' = 'sqlite',
  ) {
    this.attempts = new SignInAttemptsRepository(db, dialect === 'postgres');
    this.secondFactor = new SecondFactorRepository(db);
    this.invitations = new InvitationsRepository(db, dialect === 'postgres');
  }

  /** Creates the organization if needed (with `allowedTiers` when given), then the owner. */
  async createOwner(
    owner: Omit<AccountRecord, 'passwordHash' | 'totpSecret' | 'totpLastStep'> & { passwordHash: string | null },
    allowedTiers?: string[],
  ): Promise<AccountRecord> {
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
    return { ...owner, totpSecret: null, totpLastStep: null };
  }

  async findOwnerByEmail(email: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom('owners').selectAll().where('email', '=', email).executeTakeFirst();
    return row === undefined ? undefined : toOwner(row);
  }

  async findOwnerById(id: string): Promise<AccountRecord | undefined> {
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

  /** Deletes every unused set-password link of the owner (a newer link, a used one or a password change voids them). */
  async deleteUnusedLinks(ownerId: string): Promise<void> {
    await this.db.deleteFrom('owner_links').where('owner_id', '=', ownerId).where('used_at', 'is', null).execute();
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

  /**
   * Revokes one of the owner's sessions (`only`), or all of them but `except` (every one when neither
   * is given); returns how many.
   */
  async revokeSessions(ownerId: string, now: number, scope: { only?: string; except?: string } = {}): Promise<number> {
    let query = this.db
      .updateTable('dashboard_sessions')
      .set({ revoked_at: now })
      .where('owner_id', '=', ownerId)
      .where('revoked_at', 'is', null);
    if (scope.only !== undefined) query = query.where('id', '=', scope.only);
    if (scope.except !== undefined) query = query.where('id', '<>', scope.except);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Whether the owner signed in from `address` since `sinceMs` (a session was opened from there): a known device. */
  async signedInFrom(ownerId: string, address: string, sinceMs: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('dashboard_sessions')
      .select('id')
      .where('owner_id', '=', ownerId)
      .where('address', '=', address)
      .where('created_at', '>=', sinceMs)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes at most `batchSize` sessions whose absolute expiry is before `beforeMs`; returns how many. */
  async deleteSessionsExpiredBefore(beforeMs: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('dashboard_sessions')
      .where('id', 'in', (eb) =>
        eb.selectFrom('dashboard_sessions').select('id').where('absolute_expires_at', '<', beforeMs).limit(batchSize),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async appendAudit(entry: Omit<AuditEntry, 'id' | 'occurrences'>): Promise<void> {
    await this.db.insertInto('audit_log').values(auditRow(entry)).execute();
  }

  /**
   * Counts one more occurrence of `entry.action` by `entry.actor` on the row of the window that starts
   * at `windowStartMs` (the address becomes the latest one), or starts that row: one upsert on the
   * unique window key (migration 0130), so instances racing on a window's first occurrence still
   * write one row.
   */
  async appendAggregatedAudit(entry: Omit<AuditEntry, 'id' | 'occurrences'>, windowStartMs: number): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({ ...auditRow(entry), window_start: windowStartMs })
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'actor', 'action', 'window_start']).doUpdateSet((eb) => ({
          occurrences: eb('audit_log.occurrences', '+', 1),
          address: eb.ref('excluded.address'),
        })),
      )
      .execute();
  }

  /** Deletes at most `batchSize` audit entries older than `beforeMs`; returns how many. */
  async deleteAuditOlderThan(beforeMs: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('audit_log')
      .where('id', 'in', (eb) => eb.selectFrom('audit_log').select('id').where('created_at', '<', beforeMs).limit(batchSize))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * One page of an organization's audit log, newest first (the dashboard's audit page): rows older
   * than the `before` id, only those whose actor, action or target contains `search` when given.
   */
  async auditPage(organizationId: string, query: { limit: number; before?: number; search?: string }): Promise<AuditEntry[]> {
    let select = this.db.selectFrom('audit_log').selectAll().where('organization_id', '=', organizationId);
    const { before, search } = query;
    if (before !== undefined) select = select.where('id', '<', before);
    if (search !== undefined)
      select = select.where((eb) => eb.or([containsText('actor', search), containsText('action', search), containsText('target', search)]));
    const rows = await select.orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(toAuditEntry);
  }

  /** The targets of the organization's key rotations (`old -> new`), for the keys page's "replaced" marks. */
  async keyRotations(organizationId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('audit_log')
      .select('target')
      .where('organization_id', '=', organizationId)
      .where('action', '=', 'key.rotated')
      .execute();
    return rows.flatMap((row) => (row.target === null ? [] : [row.target]));
  }

  async listAudit(organizationId: string, limit: number): Promise<AuditEntry[]> {
    const rows = await this.db
      .selectFrom('audit_log')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toAuditEntry);
  }
}

function toAuditEntry(row: Selectable<DatabaseSchema['audit_log']>): AuditEntry {
  return {
    id: Number(row.id),
    organizationId: row.organization_id,
    actor: row.actor,
    action: row.action,
    target: row.target,
    address: row.address,
    createdAt: Number(row.created_at),
    occurrences: Number(row.occurrences),
  };
}

/** An audit entry as its `audit_log` row. */
function auditRow(entry: Omit<AuditEntry, 'id' | 'occurrences'>) {
  return {
    organization_id: entry.organizationId,
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    address: entry.address,
    created_at: entry.createdAt,
  };
}
