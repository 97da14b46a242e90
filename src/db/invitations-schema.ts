/**
 * Table types of invitations (migration 0230), kept apart from schema.ts, which extends them. Same
 * conventions as schema.ts: integer milliseconds since the epoch.
 */

/**
 * An invitation to join an organization, apart from the accounts: every invitation is one row whatever
 * the address is (it may have an account elsewhere), so an owner's view of it never depends on that.
 * The account is made when the link is used (`accepted`); the first accepted invitation to an address
 * wins and the others become `voided`; an owner's revocation makes it `revoked`.
 */
export interface InvitationsTable {
  /** Public id (`own_...`): the account made on acceptance takes it, so the People list keeps the same row id. */
  id: string;
  organization_id: string;
  /** Lower-case plain address. */
  email: string;
  /** `owner` or `member`. */
  role: string;
  /** The inviter's email; null for invitations moved from pending accounts by migration 0230. */
  invited_by: string | null;
  created_at: number;
  /** When the current link stops working. */
  expires_at: number;
  /** SHA-256 of the current link's token (one live link per invitation); null once it is no longer pending. */
  token_hash: string | null;
  /** `pending`, `accepted`, `revoked` or `voided`. */
  state: string;
  updated_at: number;
}

export interface InvitationsSchema {
  invitations: InvitationsTable;
}
