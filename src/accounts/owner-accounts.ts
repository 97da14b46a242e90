/**
 * The dashboard's accounts: owners (and read-only members) of organizations, one-time set-password
 * links, sign-in with per-account and per-address throttling (counted in the database, so every
 * instance sees the same attempts), optional TOTP, server-side sessions with idle and absolute expiry,
 * and the audit log. Secrets (passwords, link tokens, session tokens) are never stored or logged: only
 * their scrypt or SHA-256 hashes reach the database.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { ServiceError, invalidParameter } from '../core/service-error.ts';
import { randomAlphanumeric } from '../core/ids.ts';
import type { OwnerRecord, OwnerRole, OwnersRepository, SessionRecord } from '../db/repositories/owners-repository.ts';
import { authError } from './authenticator.ts';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface OwnerAccountsOptions {
  /** Session lifetime without use; default 2 hours. */
  idleTimeoutMs?: number;
  /** Session lifetime from sign-in, however it is used; default 24 hours. */
  absoluteTimeoutMs?: number;
  /** Set-password links stay valid this long; default 24 hours. */
  linkLifetimeMs?: number;
  /** Failed attempts per account, and per address, within `throttleWindowMs` before sign-in is refused. */
  maxFailuresPerAccount?: number;
  maxFailuresPerAddress?: number;
  throttleWindowMs?: number;
  now?: () => number;
}

export interface SignInRequest {
  email: string;
  password: string;
  /** Six-digit code, required once TOTP is enabled. */
  totp?: string;
  address: string;
  userAgent: string | null;
}

export interface SignedIn {
  /** The cookie value (shown once to the browser, stored only as a hash). */
  token: string;
  session: SessionRecord;
  owner: OwnerRecord;
}

export interface ResolvedSession {
  session: SessionRecord;
  owner: OwnerRecord;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Organization ids follow the key service's rule. */
const ORGANIZATION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

export class OwnerAccounts {
  private readonly idleTimeoutMs: number;
  private readonly absoluteTimeoutMs: number;
  private readonly linkLifetimeMs: number;
  private readonly maxFailuresPerAccount: number;
  private readonly maxFailuresPerAddress: number;
  private readonly throttleWindowMs: number;
  private readonly now: () => number;

  constructor(
    private readonly repository: OwnersRepository,
    options: OwnerAccountsOptions = {},
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 2 * HOUR;
    this.absoluteTimeoutMs = options.absoluteTimeoutMs ?? 24 * HOUR;
    this.linkLifetimeMs = options.linkLifetimeMs ?? 24 * HOUR;
    this.maxFailuresPerAccount = options.maxFailuresPerAccount ?? 5;
    this.maxFailuresPerAddress = options.maxFailuresPerAddress ?? 20;
    this.throttleWindowMs = options.throttleWindowMs ?? 15 * MINUTE;
    this.now = options.now ?? Date.now;
  }

  /**
   * Creates an owner (or member). With a password it is set at once; without one a set-password link
   * token valid for `linkLifetimeMs` is returned. `allowedTiers` sets the tiers the organization's
   * owners may give keys.
   */
  async createOwner(request: {
    organization: string;
    email: string;
    role?: OwnerRole;
    password?: string;
    allowedTiers?: string[];
  }): Promise<{ owner: OwnerRecord; linkToken: string | undefined }> {
    if (!ORGANIZATION_PATTERN.test(request.organization)) {
      throw invalidParameter('organization', 'Organization ids use letters, digits, dot, dash and underscore (at most 100 characters).');
    }
    const email = request.email.trim().toLowerCase();
    if (!EMAIL_PATTERN.test(email) || email.length > 254) throw invalidParameter('email', `"${request.email}" is not an email address.`);
    if (request.password !== undefined) {
      const problem = passwordProblem(request.password);
      if (problem !== undefined) throw invalidParameter('password', problem);
    }
    if ((await this.repository.findOwnerByEmail(email)) !== undefined)
      throw invalidParameter('email', `An account for ${email} already exists.`);
    const owner = await this.repository.createOwner(
      {
        id: `own_${randomAlphanumeric(16)}`,
        organizationId: request.organization,
        email,
        role: request.role ?? 'owner',
        passwordHash: request.password === undefined ? null : await hashPassword(request.password),
        createdAt: this.now(),
      },
      request.allowedTiers,
    );
    const linkToken = request.password === undefined ? await this.issueLink(owner.id) : undefined;
    return { owner, linkToken };
  }

  /** A new one-time set-password link token for the owner. */
  async issueLink(ownerId: string): Promise<string> {
    const token = randomAlphanumeric(43);
    const createdAt = this.now();
    await this.repository.createLink({ tokenHash: sha256(token), ownerId, createdAt, expiresAt: createdAt + this.linkLifetimeMs });
    return token;
  }

  findOwnerByEmail(email: string): Promise<OwnerRecord | undefined> {
    return this.repository.findOwnerByEmail(email.trim().toLowerCase());
  }

  /** Uses a set-password link once: sets the password and signs in. */
  async setPasswordWithLink(token: string, password: string, client: { address: string; userAgent: string | null }): Promise<SignedIn> {
    const problem = passwordProblem(password);
    if (problem !== undefined) throw invalidParameter('password', problem);
    const ownerId = await this.repository.consumeLink(sha256(token), this.now());
    if (ownerId === undefined)
      throw authError('invalid_token', 'This sign-in link is unknown, already used or expired. Ask the operator for a new one.');
    const owner = await this.repository.findOwnerById(ownerId);
    if (owner === undefined) throw authError('invalid_token', 'This sign-in link belongs to no account.');
    await this.repository.setPasswordHash(owner.id, await hashPassword(password));
    // A password reset ends every session an attacker might hold.
    await this.repository.revokeSessions(owner.id, this.now());
    await this.audit(owner, 'password.set', null, client.address);
    return this.openSession(owner, client);
  }

  async signIn(request: SignInRequest): Promise<SignedIn> {
    const email = request.email.trim().toLowerCase();
    const now = this.now();
    const since = now - this.throttleWindowMs;
    const accountSubject = `account:${email}`;
    const addressSubject = `address:${request.address}`;
    const [accountFailures, addressFailures] = await Promise.all([
      this.repository.recentFailures(accountSubject, since),
      this.repository.recentFailures(addressSubject, since),
    ]);
    if (accountFailures >= this.maxFailuresPerAccount || addressFailures >= this.maxFailuresPerAddress) {
      const retryAfterSeconds = Math.ceil(this.throttleWindowMs / 1000);
      throw new ServiceError({
        status: 429,
        type: 'rate_limit_exceeded',
        code: 'too_many_sign_in_attempts',
        message: `Too many failed sign-in attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`,
        headers: { 'retry-after': String(retryAfterSeconds) },
      });
    }
    const owner = await this.repository.findOwnerByEmail(email);
    const passwordOk = await verifyPassword(request.password, owner?.passwordHash ?? (await decoyHash()));
    let failure: ServiceError | undefined;
    if (owner === undefined || owner.passwordHash === null || !passwordOk) {
      failure = authError('invalid_credentials', 'Unknown email or wrong password.');
    } else if (owner.totpSecret !== null) {
      if (request.totp === undefined || request.totp === '')
        failure = authError('totp_required', 'Enter the six-digit code from your authenticator app.');
      else if (!this.totpMatches(owner.totpSecret, request.totp))
        failure = authError('invalid_credentials', 'The authenticator code is wrong.');
    }
    if (failure !== undefined) {
      // A missing second factor is not a guess: it is not counted against the account.
      if (failure.code !== 'totp_required') {
        await Promise.all([
          this.repository.recordAttempt(accountSubject, false, now),
          this.repository.recordAttempt(addressSubject, false, now),
        ]);
        if (owner !== undefined) await this.audit(owner, 'sign_in.failed', null, request.address);
      }
      throw failure;
    }
    await Promise.all([this.repository.recordAttempt(accountSubject, true, now), this.repository.recordAttempt(addressSubject, true, now)]);
    await this.audit(owner!, 'sign_in.succeeded', null, request.address);
    return this.openSession(owner!, request);
  }

  private async openSession(owner: OwnerRecord, client: { address: string; userAgent: string | null }): Promise<SignedIn> {
    const token = randomAlphanumeric(43);
    const now = this.now();
    const session: SessionRecord = {
      id: `ses_${randomAlphanumeric(16)}`,
      ownerId: owner.id,
      organizationId: owner.organizationId,
      userAgent: client.userAgent === null ? null : client.userAgent.slice(0, 300),
      address: client.address,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: now + this.idleTimeoutMs,
      absoluteExpiresAt: now + this.absoluteTimeoutMs,
      revokedAt: null,
    };
    await this.repository.createSession({ ...session, tokenHash: sha256(token) });
    return { token, session, owner };
  }

  /**
   * The session behind a cookie value: 401 `invalid_token` for a malformed, unknown or revoked one,
   * 401 `session_expired` past its idle or absolute expiry. Moves the idle expiry forward (written at
   * most once a minute, so reads stay reads).
   */
  async resolveSession(token: string | undefined): Promise<ResolvedSession> {
    if (token === undefined || !/^[A-Za-z0-9]{43}$/.test(token))
      throw authError('invalid_token', 'Not signed in: the session cookie is missing or malformed.');
    const session = await this.repository.findSessionByTokenHash(sha256(token));
    if (session === undefined || session.revokedAt !== null)
      throw authError('invalid_token', 'This session is unknown or was signed out. Sign in again.');
    const now = this.now();
    if (session.idleExpiresAt <= now || session.absoluteExpiresAt <= now)
      throw authError('session_expired', 'Your session has expired. Sign in again.');
    const owner = await this.repository.findOwnerById(session.ownerId);
    if (owner === undefined) throw authError('invalid_token', 'This session belongs to no account.');
    if (now - session.lastSeenAt >= MINUTE) {
      const idleExpiresAt = Math.min(now + this.idleTimeoutMs, session.absoluteExpiresAt);
      await this.repository.touchSession(session.id, now, idleExpiresAt);
      session.lastSeenAt = now;
      session.idleExpiresAt = idleExpiresAt;
    }
    return { session, owner };
  }

  /** The CSRF token of a session: derived from its secret, so it needs no storage and dies with it. */
  csrfToken(sessionToken: string): string {
    return createHash('sha256').update(`csrf\0${sessionToken}`).digest('base64url');
  }

  csrfMatches(sessionToken: string, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const expected = Buffer.from(this.csrfToken(sessionToken));
    const given = Buffer.from(presented);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  listSessions(ownerId: string): Promise<SessionRecord[]> {
    return this.repository.listSessions(ownerId, this.now());
  }

  /** Signs out one session of the owner, or all of them ("sign out everywhere"). */
  revokeSessions(ownerId: string, sessionId?: string): Promise<number> {
    return this.repository.revokeSessions(ownerId, this.now(), sessionId);
  }

  /** Starts TOTP enrolment: a new secret and its otpauth:// URI (not active until confirmed). */
  totpEnrolment(owner: OwnerRecord): { secret: string; uri: string } {
    const secret = new Secret({ size: 20 }).base32;
    return { secret, uri: this.totp(secret, owner.email).toString() };
  }

  /** Turns TOTP on once the owner proves the authenticator has the secret. */
  async enableTotp(owner: OwnerRecord, secret: string, code: string, address: string): Promise<void> {
    if (!/^[A-Z2-7]{16,}$/.test(secret)) throw invalidParameter('secret', 'The secret is not a base32 TOTP secret.');
    if (!this.totpMatches(secret, code))
      throw invalidParameter('code', 'The code does not match; check the time on your device and try again.');
    await this.repository.setTotpSecret(owner.id, secret);
    await this.audit(owner, 'totp.enabled', null, address);
  }

  async disableTotp(owner: OwnerRecord, address: string): Promise<void> {
    await this.repository.setTotpSecret(owner.id, null);
    await this.audit(owner, 'totp.disabled', null, address);
  }

  private totp(secret: string, label: string): TOTP {
    return new TOTP({ issuer: 'Switchyard', label, secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
  }

  private totpMatches(secret: string, code: string): boolean {
    return /^\d{6}$/.test(code) && this.totp(secret, 'check').validate({ token: code, timestamp: this.now(), window: 1 }) !== null;
  }

  /** Appends to the organization's audit log. */
  audit(
    actor: OwnerRecord | { organizationId: string; email: string },
    action: string,
    target: string | null,
    address: string | null,
  ): Promise<void> {
    return this.repository.appendAudit({
      organizationId: actor.organizationId,
      actor: actor.email,
      action,
      target,
      address,
      createdAt: this.now(),
    });
  }

  listAudit(organizationId: string, limit = 200): ReturnType<OwnersRepository['listAudit']> {
    return this.repository.listAudit(organizationId, limit);
  }

  allowedTiers(organizationId: string): Promise<string[] | undefined> {
    return this.repository.allowedTiers(organizationId);
  }
}
