/**
 * Single sign-on's rows (migration 0220): started sign-ins, taken once by the callback on whichever
 * instance it reaches, and the links between a provider's subjects and dashboard accounts. Secrets of a
 * pending sign-in are looked up by the SHA-256 of its `state`, never by the value itself.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';
import type { SsoPendingSignInsTable } from '../sso-schema.ts';

export interface PendingSignIn {
  stateHash: string;
  provider: string;
  nonce: string;
  codeVerifier: string;
  browserHash: string;
  redirectUri: string;
  /** The address that started it. */
  address: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  expiresAt: number;
}

export interface SsoIdentity {
  provider: string;
  subject: string;
  ownerId: string;
  email: string | null;
  createdAt: number;
  lastSignInAt: number;
}

function toPending(row: Selectable<SsoPendingSignInsTable>): PendingSignIn {
  return {
    stateHash: row.state_hash,
    provider: row.provider,
    nonce: row.nonce,
    codeVerifier: row.code_verifier,
    browserHash: row.browser_hash,
    redirectUri: row.redirect_uri,
    address: row.address,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/** Expired pending sign-ins deleted per start, so the table stays bounded without a timer. */
const PURGE_BATCH = 100;

export class SsoRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Records a started sign-in, and deletes up to a batch of expired ones. */
  async createPending(pending: PendingSignIn): Promise<void> {
    const expired = this.db
      .selectFrom('sso_pending_sign_ins')
      .select('state_hash')
      .where('expires_at', '<=', pending.createdAt)
      .limit(PURGE_BATCH);
    await this.db.deleteFrom('sso_pending_sign_ins').where('state_hash', 'in', expired).execute();
    await this.db
      .insertInto('sso_pending_sign_ins')
      .values({
        state_hash: pending.stateHash,
        provider: pending.provider,
        nonce: pending.nonce,
        code_verifier: pending.codeVerifier,
        browser_hash: pending.browserHash,
        redirect_uri: pending.redirectUri,
        address: pending.address,
        created_at: pending.createdAt,
        expires_at: pending.expiresAt,
      })
      .execute();
  }

  /**
   * Takes the pending sign-in of a state: deleted in the same statement that reads it, so of two
   * callbacks carrying the same state (a replay, or racing instances) exactly one gets it.
   */
  async takePending(stateHash: string): Promise<PendingSignIn | undefined> {
    const row = await this.db.deleteFrom('sso_pending_sign_ins').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
    return row === undefined ? undefined : toPending(row);
  }

  /** Unexpired pending sign-ins started from `address`. */
  async countPending(address: string, now: number): Promise<number> {
    const row = await this.db
      .selectFrom('sso_pending_sign_ins')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('address', '=', address)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async findIdentity(provider: string, subject: string): Promise<SsoIdentity | undefined> {
    const row = await this.db
      .selectFrom('sso_identities')
      .selectAll()
      .where('provider', '=', provider)
      .where('subject', '=', subject)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      provider: row.provider,
      subject: row.subject,
      ownerId: row.owner_id,
      email: row.email,
      createdAt: Number(row.created_at),
      lastSignInAt: Number(row.last_sign_in_at),
    };
  }

  /** Whether any provider subject is linked to the account (an SSO account, or a linked password account). */
  async hasIdentity(ownerId: string): Promise<boolean> {
    const row = await this.db.selectFrom('sso_identities').select('owner_id').where('owner_id', '=', ownerId).executeTakeFirst();
    return row !== undefined;
  }

  /** Links a provider subject to an account; a subject already linked keeps its first account. */
  async link(identity: { provider: string; subject: string; ownerId: string; email: string | null; now: number }): Promise<void> {
    await this.db
      .insertInto('sso_identities')
      .values({
        provider: identity.provider,
        subject: identity.subject,
        owner_id: identity.ownerId,
        email: identity.email,
        created_at: identity.now,
        last_sign_in_at: identity.now,
      })
      .onConflict((conflict) => conflict.columns(['provider', 'subject']).doNothing())
      .execute();
  }

  async touch(provider: string, subject: string, email: string | null, now: number): Promise<void> {
    await this.db
      .updateTable('sso_identities')
      .set({ email, last_sign_in_at: now })
      .where('provider', '=', provider)
      .where('subject', '=', subject)
      .execute();
  }

  /** The owner id of an unused, unexpired set-password link (by its token's SHA-256), without using it. */
  async linkOwner(tokenHash: string, now: number): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('owner_links')
      .select('owner_id')
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row?.owner_id;
  }
}
