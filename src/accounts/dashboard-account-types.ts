/** What the dashboard's accounts (dashboard-accounts.ts) take and give: options, sign-in requests, sessions. */
import type { AccountRecord, SessionRecord } from '../db/repositories/owners-repository.ts';

export interface DashboardAccountsOptions {
  /** Session lifetime without use; default 2 hours. */
  idleTimeoutMs?: number;
  /** Session lifetime from sign-in, however it is used; default 24 hours. */
  absoluteTimeoutMs?: number;
  /** Set-password links stay valid this long; default 24 hours. */
  linkLifetimeMs?: number;
  /** Failed attempts per account (and per known device), and per address, within `throttleWindowMs` before sign-in is refused; default 5 and 20. */
  maxFailuresPerAccount?: number;
  maxFailuresPerAddress?: number;
  /** Default 15 minutes. */
  throttleWindowMs?: number;
  /** An address the owner signed in from within this long is a known device; default 30 days. */
  knownDeviceWindowMs?: number;
  /** How long a known device's sign-in waits while its account is over the failure limit; default 1 second. */
  lockedAccountDelayMs?: number;
  now?: () => number;
}

export interface SignInRequest {
  email: string;
  password: string;
  /** Six-digit code (or a recovery code), required once TOTP is enabled. */
  totp?: string;
  address: string;
  userAgent: string | null;
  /** The session cookie the request carried, if any: a valid one of this account marks a known device. */
  sessionToken?: string;
}

/** What proves a signed-in owner is at the keyboard before the second factor changes. */
export interface Reauthentication {
  password?: string;
  /** A current TOTP code (or a recovery code) when TOTP is on. */
  code?: string;
}

export interface SignedIn {
  /** The cookie value (shown once to the browser, stored only as a hash). */
  token: string;
  session: SessionRecord;
  owner: AccountRecord;
}

/** A link set the password of an account with TOTP on: no session yet, the person signs in with their code. */
export interface PasswordSet {
  secondFactorRequired: true;
  owner: AccountRecord;
}

export interface ResolvedSession {
  session: SessionRecord;
  owner: AccountRecord;
}
