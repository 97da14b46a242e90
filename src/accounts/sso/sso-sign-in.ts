/**
 * Single sign-on's use cases (README "Single sign-on"). `start` records a pending sign-in (state,
 * nonce, PKCE verifier, the browser's binding) in the shared database and answers the provider's URL;
 * `finish` takes that row once (whichever instance the callback reaches), lets openid-client verify the
 * answer, then decides who gets in as what from the configured rules: a just-in-time account at the
 * first sign-in, the role the rules give now at every sign-in, no access (and every session ended) for
 * a person the rules no longer admit. An existing account with the same verified email is linked only
 * when the provider's `linkExistingAccounts` allows it. The password policy (SSO-only deployment or
 * organizations, break-glass operators) is `passwordRefusal`.
 */
import { createHash } from 'node:crypto';
import type { SsoConfig, SsoProviderConfig } from '../../config/index.ts';
import { randomAlphanumeric } from '../../core/ids.ts';
import { notFound } from '../../core/service-error.ts';
import { OPERATORS_ORGANIZATION } from '../../db/repositories/organizations-repository.ts';
import type { OperatorAuditRepository } from '../../db/repositories/operator-audit-repository.ts';
import type { AccountRecord, OwnersRepository } from '../../db/repositories/owners-repository.ts';
import type { PeopleRepository } from '../../db/repositories/people-repository.ts';
import type { SsoRepository } from '../../db/repositories/sso-repository.ts';
import type { DashboardAccounts, SignedIn } from '../dashboard-accounts.ts';
import { accessFromClaims, type MappedAccess } from './claim-rules.ts';
import { OidcClients, providerName, type VerifiedClaims } from './oidc-clients.ts';
import { SsoError } from './sso-errors.ts';
import * as oidc from 'openid-client';

export interface SsoClient {
  address: string;
  userAgent: string | null;
}

export interface StartedSignIn {
  /** Where to send the browser: the provider's authorization endpoint. */
  url: URL;
  /** The value of the browser's binding cookie; only its SHA-256 is stored. */
  browserToken: string;
}

export interface SsoSignInOptions {
  config: SsoConfig;
  accounts: DashboardAccounts;
  owners: OwnersRepository;
  people: PeopleRepository;
  repository: SsoRepository;
  operatorAudit: OperatorAuditRepository;
  now?: () => number;
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The email to match and create accounts by: a verified one (or any, when the provider is trusted not to send `email_verified`). */
function trustedEmail(provider: SsoProviderConfig, claims: VerifiedClaims): string | undefined {
  const email = claims['email'];
  if (typeof email !== 'string' || !EMAIL_PATTERN.test(email) || email.length > 254) return undefined;
  if (provider.requireVerifiedEmail && claims['email_verified'] !== true) return undefined;
  return email.trim().toLowerCase();
}

export class SsoSignIn {
  readonly clients: OidcClients;
  private readonly now: () => number;

  constructor(private readonly options: SsoSignInOptions) {
    this.clients = new OidcClients(options.config.providers);
    this.now = options.now ?? Date.now;
  }

  /** The configured providers, for the sign-in page's buttons. */
  providers(): readonly { id: string; label: string }[] {
    return this.clients.list().map((provider) => ({ id: provider.id, label: provider.label }));
  }

  async start(providerId: string, redirectUri: string, address: string): Promise<StartedSignIn> {
    const provider = this.clients.find(providerId);
    // Each start writes a row: one address cannot fill the table.
    if ((await this.options.repository.countPending(address, this.now())) >= this.options.config.maxPendingPerAddress)
      throw new SsoError(
        'too_many_sign_ins',
        429,
        'Too many sign-ins were started from your address and not finished. Finish one, or wait a few minutes and start again.',
      );
    const request = { redirectUri, state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
    // The URL first: an unreachable issuer leaves no row behind.
    const url = await this.clients.authorizationUrl(provider, request);
    const browserToken = randomAlphanumeric(43);
    const now = this.now();
    await this.options.repository.createPending({
      stateHash: sha256(request.state),
      provider: provider.id,
      nonce: request.nonce,
      codeVerifier: request.codeVerifier,
      browserHash: sha256(browserToken),
      redirectUri,
      address,
      createdAt: now,
      expiresAt: now + this.options.config.pendingLifetimeMs,
    });
    return { url, browserToken };
  }

  /** Finishes a sign-in from the provider's redirect (`query`: its parameters), in the browser holding `browserToken`. */
  async finish(providerId: string, query: URLSearchParams, browserToken: string | undefined, client: SsoClient): Promise<SignedIn> {
    const provider = this.clients.find(providerId);
    const state = query.get('state');
    if (state === null || state === '')
      throw new SsoError(
        'state_unknown',
        400,
        'The answer from the sign-in provider carries no state. Start the sign-in again from the sign-in page.',
      );
    const pending = await this.options.repository.takePending(sha256(state));
    if (pending === undefined || pending.provider !== provider.id)
      throw new SsoError(
        'state_unknown',
        400,
        'This sign-in was already completed, or is unknown here: each one can be finished once. Start again from the sign-in page.',
      );
    if (pending.expiresAt <= this.now())
      throw new SsoError('state_expired', 400, 'This sign-in took too long and has expired. Start again from the sign-in page.');
    if (browserToken === undefined || sha256(browserToken) !== pending.browserHash)
      throw new SsoError(
        'browser_mismatch',
        400,
        'This sign-in was started in another browser (or its cookie was lost). Start again from the sign-in page in this browser.',
      );
    const callbackUrl = new URL(pending.redirectUri);
    callbackUrl.search = query.toString();
    const claims = await this.clients.finish(provider, callbackUrl, { state, nonce: pending.nonce, codeVerifier: pending.codeVerifier });
    return this.admit(provider, claims, client);
  }

  /** Who the verified claims are here, and with what role; a session for them, or the reason they get none. */
  private async admit(provider: SsoProviderConfig, claims: VerifiedClaims, client: SsoClient): Promise<SignedIn> {
    const via = `sso:${provider.id}`;
    const email = trustedEmail(provider, claims);
    const access = accessFromClaims(provider.rules, { ...claims, ...(email === undefined ? {} : { email_domain: email.split('@')[1] }) });
    const identity = await this.options.repository.findIdentity(provider.id, claims.sub);
    const linked = identity === undefined ? undefined : await this.options.owners.findOwnerById(identity.ownerId);
    if (access === undefined) {
      if (linked !== undefined) await this.refuse(linked, via, client, true);
      throw new SsoError(
        'no_access',
        403,
        `Your ${providerName(provider)} account is not in any group that gives access to this server. Ask your administrator to add you, then sign in again.`,
      );
    }
    let owner = linked;
    if (owner === undefined) {
      if (email === undefined)
        throw new SsoError(
          'email_unverified',
          403,
          `${providerName(provider)} did not give a verified email address for your account, so no account can be made for you. Ask your administrator to verify it.`,
        );
      const existing = await this.options.owners.findOwnerByEmail(email);
      if (existing !== undefined && !provider.linkExistingAccounts) {
        await this.refuse(existing, via, client, false);
        throw new SsoError(
          'account_exists',
          409,
          `An account for ${email} already exists here, and the operator has not allowed linking it to ${providerName(provider)}. Sign in with your password, or ask the operator to allow linking.`,
        );
      }
      owner = existing ?? (await this.createAccount(email, access));
      await this.checkAccess(owner, access, via, client);
      await this.options.repository.link({ provider: provider.id, subject: claims.sub, ownerId: owner.id, email, now: this.now() });
      await this.options.accounts.audit(owner, existing === undefined ? 'account.created' : 'sso.linked', via, client.address);
    } else {
      await this.checkAccess(owner, access, via, client);
      await this.options.repository.touch(provider.id, claims.sub, email ?? null, this.now());
    }
    if (access.role !== 'operator' && owner.role !== access.role) {
      await this.options.people.setRole(owner.id, access.role);
      await this.options.accounts.audit(owner, 'role.changed', `${access.role} ${via}`, client.address);
      owner = { ...owner, role: access.role };
    }
    return this.options.accounts.signInVerified(owner, client, via);
  }

  /**
   * The account must be where the rules put the person now: an operator only through an operator rule,
   * never an organization's person through one (and the reverse), the same organization. Otherwise the
   * sign-in is refused and the account's sessions end.
   */
  private async checkAccess(owner: AccountRecord, access: MappedAccess, via: string, client: SsoClient): Promise<void> {
    if ((access.role === 'operator') !== (owner.role === 'operator')) {
      await this.refuse(owner, via, client, true);
      throw new SsoError(
        'role_mismatch',
        403,
        access.role === 'operator'
          ? `The account ${owner.email} belongs to an organization, not to the operators: an operator signs in with an operator account. Ask the operator.`
          : `The account ${owner.email} is an operator account, and your provider does not list you as an operator. Ask the operator.`,
      );
    }
    if (access.role !== 'operator' && owner.organizationId !== access.organization) {
      await this.refuse(owner, via, client, true);
      throw new SsoError(
        'organization_mismatch',
        403,
        `Your account belongs to ${owner.organizationId}, but your provider now places you in ${access.organization}. Ask the operator to move your account.`,
      );
    }
  }

  /** A refused sign-in: audited naming the provider; with `endSessions`, the person's open sessions end at once. */
  private async refuse(owner: AccountRecord, via: string, client: SsoClient, endSessions: boolean): Promise<void> {
    if (endSessions) await this.options.owners.revokeSessions(owner.id, this.now());
    await this.options.accounts.audit(owner, 'sign_in.refused', via, client.address);
  }

  private async createAccount(email: string, access: MappedAccess): Promise<AccountRecord> {
    return this.options.owners.createOwner({
      id: `own_${randomAlphanumeric(16)}`,
      organizationId: access.role === 'operator' ? OPERATORS_ORGANIZATION : access.organization,
      email,
      role: access.role,
      passwordHash: null,
      createdAt: this.now(),
    });
  }

  /**
   * Why the password form is refused for `email`, or undefined when it may be used: an SSO-only
   * deployment refuses everyone but its break-glass operators (whether or not the account exists, so the
   * answer tells nothing about accounts); an SSO-only organization refuses its people.
   */
  async passwordRefusal(email: string): Promise<string | undefined> {
    const { ssoOnly, ssoOnlyOrganizations, breakGlassOperators } = this.options.config;
    if (!ssoOnly && ssoOnlyOrganizations.length === 0) return undefined;
    const address = email.trim().toLowerCase();
    const owner = await this.options.owners.findOwnerByEmail(address);
    if (ssoOnly) {
      if (owner?.role === 'operator' && breakGlassOperators.includes(owner.email)) return undefined;
      return 'This server signs in with single sign-on only: use the button of your identity provider above.';
    }
    if (owner !== undefined && ssoOnlyOrganizations.includes(owner.organizationId))
      return `${owner.organizationId} signs in with single sign-on only: use the button of your identity provider above.`;
    return undefined;
  }

  /** The same policy for a set-password link (its token), which would otherwise open a password session. */
  async passwordRefusalForLink(token: string): Promise<string | undefined> {
    const { ssoOnly, ssoOnlyOrganizations } = this.options.config;
    if (!ssoOnly && ssoOnlyOrganizations.length === 0) return undefined;
    const ownerId = await this.options.repository.linkOwner(sha256(token), this.now());
    const owner = ownerId === undefined ? undefined : await this.options.owners.findOwnerById(ownerId);
    return owner === undefined ? undefined : this.passwordRefusal(owner.email);
  }

  /**
   * An operator ends every session of a person at once (e.g. just removed from the provider's group,
   * before their next sign-in would refuse them): written to the person's organization's audit log and
   * to the operators' own. 404 for an unknown person.
   */
  async endSessions(personId: string, operator: { email: string; address: string }): Promise<number> {
    const person = await this.options.owners.findOwnerById(personId);
    if (person === undefined) throw notFound('person_not_found', `No person ${personId}.`, 'person');
    const now = this.now();
    const ended = await this.options.owners.revokeSessions(person.id, now);
    await this.options.accounts.audit(
      { organizationId: person.organizationId, email: operator.email },
      'sessions.ended_by_operator',
      person.email,
      operator.address,
    );
    await this.options.operatorAudit.append({
      actor: operator.email,
      action: 'person.sessions_ended',
      organizationId: person.organizationId,
      target: person.id,
      detail: JSON.stringify({ email: person.email, sessions: ended }),
      address: operator.address,
      createdAt: now,
    });
    return ended;
  }
}
