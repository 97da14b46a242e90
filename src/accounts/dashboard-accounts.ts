/**
 * The dashboard's accounts: owners (and read-only members) of organizations, one-time set-password
 * links, sign-in throttled per account, address and known device (sign-in-throttle.ts: reserved in the
 * database before the password is checked, so every instance sees the same attempts), an optional
 * second factor (second-factor.ts), server-side sessions with idle and absolute expiry, and the audit
 * log. Secrets (passwords, link tokens, session tokens, recovery codes) are never stored or logged:
 * only their scrypt or SHA-256 hashes reach the database.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { invalidParameter, missingParameter } from '../core/service-error.ts';
import { randomAlphanumeric } from '../core/ids.ts';
import type { AccountRecord, AccountRole, OwnersRepository, SessionRecord } from '../db/repositories/owners-repository.ts';
import { authError } from './authenticator.ts';
import { requirePlainEmailAddress } from './email-address.ts';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import { SecondFactor, type TotpEnrolment } from './second-factor.ts';
import { SignInThrottle, type Reservation } from './sign-in-throttle.ts';
import type {
  DashboardAccountsOptions,
  PasswordSet,
  Reauthentication,
  ResolvedSession,
  SignedIn,
  SignInRequest,
} from './dashboard-account-types.ts';

export type {
  DashboardAccountsOptions,
  PasswordSet,
  Reauthentication,
  ResolvedSession,
  SignedIn,
  SignInRequest,
} from './dashboard-account-types.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Organization ids follow the key service's rule. */
const ORGANIZATION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export class DashboardAccounts {
  private readonly idleTimeoutMs: number;
  private readonly absoluteTimeoutMs: number;
  private readonly linkLifetimeMs: number;
  private readonly throttleWindowMs: number;
  private readonly now: () => number;
  private readonly throttle: SignInThrottle;
  private readonly secondFactor: SecondFactor;

  constructor(
    private readonly repository: OwnersRepository,
    options: DashboardAccountsOptions = {},
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 2 * HOUR;
    this.absoluteTimeoutMs = options.absoluteTimeoutMs ?? 24 * HOUR;
    this.linkLifetimeMs = options.linkLifetimeMs ?? 24 * HOUR;
    this.throttleWindowMs = options.throttleWindowMs ?? 15 * MINUTE;
    this.now = options.now ?? Date.now;
    this.throttle = new SignInThrottle(repository, {
      maxFailuresPerAccount: options.maxFailuresPerAccount ?? 5,
      maxFailuresPerAddress: options.maxFailuresPerAddress ?? 20,
      windowMs: this.throttleWindowMs,
      knownDeviceWindowMs: options.knownDeviceWindowMs ?? 30 * DAY,
      lockedAccountDelayMs: options.lockedAccountDelayMs ?? 1000,
      now: this.now,
    });
    this.secondFactor = new SecondFactor(repository, this.now);
  }

  /**
   * Creates an owner (or member). With a password it is set at once; without one a set-password link
   * token valid for `linkLifetimeMs` is returned. `allowedTiers` sets the tiers the organization's
   * owners may give keys.
   */
  async createOwner(request: {
    organization: string;
    email: string;
    role?: AccountRole;
    password?: string;
    allowedTiers?: string[];
  }): Promise<{ owner: AccountRecord; linkToken: string | undefined }> {
    if (!ORGANIZATION_PATTERN.test(request.organization)) {
      throw invalidParameter('organization', 'Organization ids use letters, digits, dot, dash and underscore (at most 100 characters).');
    }
    const email = requirePlainEmailAddress(request.email);
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
    // At most one live link per person: a newer link voids the older ones.
    await this.repository.deleteUnusedLinks(ownerId);
    await this.repository.createLink({ tokenHash: sha256(token), ownerId, createdAt, expiresAt: createdAt + this.linkLifetimeMs });
    return token;
  }

  /** A new invitation link: its token, the hash its invitation row keeps and its expiry (the same lifetime as every link). */
  newInvitationLink(): { token: string; tokenHash: string; expiresAt: number } {
    const token = randomAlphanumeric(43);
    return { token, tokenHash: sha256(token), expiresAt: this.now() + this.linkLifetimeMs };
  }

  /** The accounts' clock (the people service reads links' expiry with the same one). */
  readonly time = (): number => this.now();

  findOwnerByEmail(email: string): Promise<AccountRecord | undefined> {
    return this.repository.findOwnerByEmail(email.trim().toLowerCase());
  }

  /**
   * Uses a set-password link once: sets the password, voids the person's other links and ends their
   * sessions. Without a second factor a session opens; with TOTP on none does: the person signs in with
   * the new password and their code (or a recovery code), exactly like any sign-in.
   */
  async setPasswordWithLink(
    token: string,
    password: string,
    client: { address: string; userAgent: string | null },
  ): Promise<SignedIn | PasswordSet> {
    const problem = passwordProblem(password);
    if (problem !== undefined) throw invalidParameter('password', problem);
    const tokenHash = sha256(token);
    // An account's own link, or an invitation's: using that makes the account (and voids the address's other invitations).
    const ownerId =
      (await this.repository.consumeLink(tokenHash, this.now())) ?? (await this.repository.invitations.accept(tokenHash, this.now()));
    if (ownerId === undefined)
      throw authError('invalid_token', 'This sign-in link is unknown, already used or expired. Ask the operator for a new one.');
    const owner = await this.repository.findOwnerById(ownerId);
    if (owner === undefined) throw authError('invalid_token', 'This sign-in link belongs to no account.');
    await this.repository.setPasswordHash(owner.id, await hashPassword(password));
    // A password reset voids every other link and ends every session an attacker might hold.
    await this.repository.deleteUnusedLinks(owner.id);
    await this.repository.revokeSessions(owner.id, this.now());
    await this.audit(owner, 'password.set', null, client.address);
    if (owner.totpSecret !== null) return { secondFactorRequired: true, owner };
    return this.openSession(owner, client);
  }

  /** Voids the person's unused set-password links (after a password change). */
  voidLinks(ownerId: string): Promise<void> {
    return this.repository.deleteUnusedLinks(ownerId);
  }

  async signIn(request: SignInRequest): Promise<SignedIn> {
    const email = request.email.trim().toLowerCase();
    const owner = await this.repository.findOwnerByEmail(email);
    const sessionId = owner === undefined ? undefined : await this.validSessionOf(owner, request.sessionToken);
    // Reserved before the (slow) password check: concurrent guesses cannot all pass the gate.
    const reservation = await this.throttle.reserveSignIn({ email, address: request.address, owner, sessionId });
    const passwordOk = await verifyPassword(request.password, owner?.passwordHash ?? (await decoyHash()));
    if (owner === undefined || owner.passwordHash === null || !passwordOk) {
      if (owner !== undefined) await this.auditFailedSignIn(owner, request.address);
      throw authError('invalid_credentials', 'Unknown email or wrong password.');
    }
    if (owner.totpSecret !== null) {
      if (request.totp === undefined || request.totp === '') {
        // A missing second factor is not a guess: it is not counted.
        await reservation.release();
        throw authError('totp_required', 'Enter the six-digit code from your authenticator app.');
      }
      const checked = await this.secondFactor.check(owner, request.totp);
      if (checked !== 'accepted') {
        await this.auditFailedSignIn(owner, request.address);
        throw authError(
          'invalid_credentials',
          checked === 'replayed' ? 'This authenticator code was used already: wait for the next one.' : 'The authenticator code is wrong.',
        );
      }
    }
    await reservation.succeed();
    await this.audit(owner, 'sign_in.succeeded', null, request.address);
    return this.openSession(owner, request);
  }

  /**
   * Opens a session for a person whose identity another party proved (single sign-on, accounts/sso/):
   * the same session as a password sign-in (cookie, CSRF, idle and absolute expiry), audited as
   * `sign_in.succeeded` with `via` (e.g. `sso:okta`) as its target.
   */
  async signInVerified(owner: AccountRecord, client: { address: string; userAgent: string | null }, via: string): Promise<SignedIn> {
    await this.audit(owner, 'sign_in.succeeded', via, client.address);
    return this.openSession(owner, client);
  }

  /** The id of the unrevoked, unexpired session of `owner` behind a cookie value, if it is one. */
  private async validSessionOf(owner: AccountRecord, token: string | undefined): Promise<string | undefined> {
    if (token === undefined || !/^[A-Za-z0-9]{43}$/.test(token)) return undefined;
    const session = await this.repository.findSessionByTokenHash(sha256(token));
    const now = this.now();
    if (session === undefined || session.ownerId !== owner.id || session.revokedAt !== null) return undefined;
    return session.idleExpiresAt > now && session.absoluteExpiresAt > now ? session.id : undefined;
  }

  /** Failed sign-ins are one audit row per account and throttle window, so a flood cannot push real entries out. */
  private auditFailedSignIn(owner: AccountRecord, address: string, action = 'sign_in.failed'): Promise<void> {
    const now = this.now();
    return this.repository.appendAggregatedAudit(
      { organizationId: owner.organizationId, actor: owner.email, action, target: null, address, createdAt: now },
      Math.floor(now / this.throttleWindowMs) * this.throttleWindowMs,
    );
  }

  private async openSession(owner: AccountRecord, client: { address: string; userAgent: string | null }): Promise<SignedIn> {
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
    return this.repository.revokeSessions(ownerId, this.now(), sessionId === undefined ? {} : { only: sessionId });
  }

  /**
   * Starts TOTP enrolment: a new server-made secret, its otpauth:// URI and QR code, pending until
   * `enableTotp` confirms a code and the password (so a session holder cannot enrol their own app).
   */
  totpEnrolment(owner: AccountRecord): Promise<TotpEnrolment> {
    return this.secondFactor.enrol(owner);
  }

  /**
   * Turns TOTP on once the owner proves the authenticator has the pending secret (`code`) and that it
   * is them (the current password). Ends the owner's other sessions; returns the recovery codes, shown once.
   */
  async enableTotp(
    owner: AccountRecord,
    code: string,
    proof: Reauthentication,
    client: { sessionId: string; address: string },
  ): Promise<string[]> {
    await this.reauthenticate(owner, { ...(proof.password === undefined ? {} : { password: proof.password }) }, client.address);
    const recoveryCodes = await this.secondFactor.enable(owner, code);
    await this.repository.revokeSessions(owner.id, this.now(), { except: client.sessionId });
    await this.audit(owner, 'totp.enabled', null, client.address);
    return recoveryCodes;
  }

  /** Turns TOTP off with the current password or a current code; ends the owner's other sessions. */
  async disableTotp(owner: AccountRecord, proof: Reauthentication, client: { sessionId: string; address: string }): Promise<void> {
    await this.reauthenticate(owner, proof, client.address);
    await this.secondFactor.disable(owner);
    await this.repository.revokeSessions(owner.id, this.now(), { except: client.sessionId });
    await this.audit(owner, 'totp.disabled', null, client.address);
  }

  /**
   * Checks that a signed-in owner knows the password, or holds the second factor (a current code or a
   * recovery code, when TOTP is on): a 400 naming `passwordParam` otherwise. Throttled like sign-in
   * (429 past the account's limit) and every failure audited (`reauthentication.failed`). Used before
   * the second factor changes, a password change and an operator minting someone's set-password link.
   */
  async reauthenticate(owner: AccountRecord, proof: Reauthentication, address: string, passwordParam = 'password'): Promise<void> {
    const password = proof.password ?? '';
    const code = proof.code ?? '';
    if (password === '' && (code === '' || owner.totpSecret === null))
      throw missingParameter(
        passwordParam,
        'Confirm it is you: send your current password' + (owner.totpSecret === null ? '.' : ' or a current code.'),
      );
    const reservation: Reservation = await this.throttle.reserveReauthentication(owner.id);
    const proven =
      password !== ''
        ? owner.passwordHash !== null && (await verifyPassword(password, owner.passwordHash))
        : (await this.secondFactor.check(owner, code)) === 'accepted';
    if (!proven) {
      await this.auditFailedSignIn(owner, address, 'reauthentication.failed');
      throw invalidParameter(
        password !== '' ? passwordParam : 'code',
        password !== '' ? 'The current password is wrong.' : 'The code is wrong or was used already.',
      );
    }
    await reservation.succeed();
  }

  /** Appends to the organization's audit log. */
  audit(
    actor: AccountRecord | { organizationId: string; email: string },
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
