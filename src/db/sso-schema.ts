/**
 * Table types of single sign-on (migration 0220), kept apart from schema.ts, which extends them. Same
 * conventions as schema.ts: integer milliseconds since the epoch.
 */

/** A provider's subject linked to a dashboard account: the account it signs in as, whatever its email becomes. */
export interface SsoIdentitiesTable {
  /** The configured provider id (`sso.providers[].id`). */
  provider: string;
  /** The ID token's `sub`: stable at the provider, unlike an email. */
  subject: string;
  owner_id: string;
  /** The email the provider last gave, for the operator's eyes. */
  email: string | null;
  created_at: number;
  last_sign_in_at: number;
}

/**
 * A sign-in started and not finished. Keyed by the SHA-256 of the `state` sent to the provider; the row
 * is deleted as the callback reads it (single use) and is refused past `expires_at`.
 */
export interface SsoPendingSignInsTable {
  state_hash: string;
  provider: string;
  /** The OpenID `nonce` the ID token must carry. */
  nonce: string;
  /** The PKCE `code_verifier` sent with the code to the token endpoint. */
  code_verifier: string;
  /** SHA-256 of the random value in the browser's binding cookie: the callback must come from the browser that started. */
  browser_hash: string;
  /** The redirect URI sent to the provider (the token request repeats it). */
  redirect_uri: string;
  /** The address that started it: the unexpired sign-ins one address may hold are bounded. */
  address: string;
  created_at: number;
  expires_at: number;
}

export interface SsoSchema {
  sso_identities: SsoIdentitiesTable;
  sso_pending_sign_ins: SsoPendingSignInsTable;
}
