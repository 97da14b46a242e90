/**
 * People in an organization and the operators themselves: owners invite members by email (owner or
 * read-only; invitations are rows of their own until accepted, invitations-repository.ts), re-send or
 * revoke invitations, change roles and remove people (their sessions end at once); everyone changes their own
 * password with the current one; the operator issues a new set-password link for anyone. Invitations
 * and links are mailed (mailer.ts). Sign-in, sessions, TOTP and CSRF stay in dashboard-accounts.ts.
 */
import { invalidParameter, notFound, ServiceError } from '../core/service-error.ts';
import type { AccountRecord, AccountRole, OwnersRepository } from '../db/repositories/owners-repository.ts';
import type { PeopleRepository, PersonRecord } from '../db/repositories/people-repository.ts';
import { OPERATORS_ORGANIZATION } from '../db/repositories/organizations-repository.ts';
import { randomAlphanumeric } from '../core/ids.ts';
import type { Mailer } from './mailer.ts';
import type { DashboardAccounts } from './dashboard-accounts.ts';
import { requirePlainEmailAddress } from './email-address.ts';
import { hashPassword, passwordProblem } from './passwords.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The link a person opens to set a password; the token is in the fragment, so it never reaches a server log. */
export function setPasswordLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard/set-password#token=${token}`;
}

export interface PeopleServiceOptions {
  accounts: DashboardAccounts;
  owners: OwnersRepository;
  people: PeopleRepository;
  mailer: Mailer;
  /** Invitations per organization per hour and per day. */
  limits: { perHour: number; perDay: number };
  now?: () => number;
}

/** Whom a link is for: an account, or an invitation. */
export interface Invitee {
  id: string;
  organizationId: string;
  email: string;
  role: AccountRole;
}

export interface IssuedLink {
  person: Invitee;
  link: string;
  /** `sent` by SMTP, or `logged` without SMTP. */
  delivery: 'sent' | 'logged';
}

export class PeopleService {
  private readonly now: () => number;

  constructor(private readonly options: PeopleServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The organization's people: its accounts and its pending invitations (one row each, alike whatever the address), by email. */
  async list(organizationId: string): Promise<PersonRecord[]> {
    const [accounts, invitations] = await Promise.all([
      this.options.people.list(organizationId),
      this.options.owners.invitations.listPending(organizationId),
    ]);
    const pending = invitations.map((invitation): PersonRecord => ({
      id: invitation.id,
      organizationId: invitation.organizationId,
      email: invitation.email,
      role: invitation.role,
      passwordSet: false,
      invitation: true,
      totpEnabled: false,
      createdAt: invitation.createdAt,
      lastSeenAt: null,
    }));
    return [...accounts, ...pending].sort((left, right) => (left.email < right.email ? -1 : left.email > right.email ? 1 : 0));
  }

  /** The person, only if they belong to `organizationId`; 404 otherwise. */
  async find(organizationId: string, personId: string): Promise<AccountRecord> {
    const person = await this.options.owners.findOwnerById(personId);
    if (person === undefined || person.organizationId !== organizationId)
      throw notFound('person_not_found', `No person ${personId} in organization ${organizationId}.`, 'person');
    return person;
  }

  /**
   * Invites `email` to the organization with `role`: an invitation row and a mailed link; the account
   * is made when the link is used (`DashboardAccounts.setPasswordWithLink`). Bounded per organization per
   * hour and per day (429 `too_many_invitations`, every instance counts the same rows). Every
   * invitation makes one row and answers alike whatever the address is: when it has an account
   * elsewhere (another organization, an operator) the person is told by mail, without a link, and the
   * link handed back without SMTP does nothing (an address has one account). No invitation holds an
   * address: every organization may invite it, and the first invitation accepted voids the others.
   * Inviting an address the organization has a pending invitation for re-sends it (a new link; the
   * older one stops working).
   */
  async invite(organizationId: string, email: string, role: 'owner' | 'member', invitedBy: string, baseUrl: string): Promise<IssuedLink> {
    const address = requirePlainEmailAddress(email);
    await this.reserveInvitation(organizationId);
    const existing = await this.options.owners.findOwnerByEmail(address);
    if (existing !== undefined && existing.organizationId === organizationId) {
      if (existing.passwordHash !== null)
        throw new ServiceError({
          status: 409,
          type: 'invalid_request_error',
          code: 'already_a_member',
          param: 'email',
          message: `${address} is already in this organization.`,
        });
      // An account of this organization made without a password (by the operator): a new link for it, the role asked now.
      if (existing.role !== role && existing.role !== 'operator') await this.options.people.setRole(existing.id, role);
      const person = { ...existing, role };
      const link = setPasswordLink(baseUrl, await this.options.accounts.issueLink(existing.id));
      return { person, link, delivery: await this.mailInvitation(person, invitedBy, link) };
    }
    const invitations = this.options.owners.invitations;
    const { token, tokenHash, expiresAt } = this.options.accounts.newInvitationLink();
    const fields = { role, invitedBy, tokenHash, expiresAt, now: this.now() };
    // One live link per invitation: renewing replaces the stored hash, so the older link stops working.
    const person = await invitations.open({ id: `own_${randomAlphanumeric(16)}`, organizationId, email: address, ...fields });
    const link = setPasswordLink(baseUrl, token);
    // The row is written before the mail: a failed mail leaves an invitation that can be sent again.
    const delivery = existing === undefined ? await this.mailInvitation(person, invitedBy, link) : await this.mailElsewhere(person);
    return { person, link, delivery };
  }

  /** Sends the pending invitation (or password-less account) `id` of the organization again, like inviting its address again. */
  async resend(organizationId: string, id: string, invitedBy: string, baseUrl: string): Promise<IssuedLink> {
    const invitation = await this.options.owners.invitations.findPending(organizationId, id);
    const target = invitation ?? (await this.find(organizationId, id));
    if (target.role === 'operator') throw invalidParameter('person', 'Operators have no organization invitation.');
    return this.invite(organizationId, target.email, target.role, invitedBy, baseUrl);
  }

  /** Changes the role of the organization's person or pending invitation `id`; returns its email and former role. */
  async changeRole(
    organizationId: string,
    id: string,
    role: 'owner' | 'member',
  ): Promise<{ id: string; email: string; previous: AccountRole }> {
    const invitation = await this.options.owners.invitations.findPending(organizationId, id);
    if (invitation !== undefined) {
      await this.options.owners.invitations.setRole(id, role, this.now());
      return { id, email: invitation.email, previous: invitation.role };
    }
    const person = await this.find(organizationId, id);
    await this.setRole(person, role);
    return { id, email: person.email, previous: person.role };
  }

  /** Removes the organization's person `id`, or revokes its pending invitation `id` (the link stops working at once). */
  async removeById(organizationId: string, id: string): Promise<{ id: string; email: string; invitation: boolean }> {
    const invitation = await this.options.owners.invitations.findPending(organizationId, id);
    if (invitation !== undefined) {
      await this.options.owners.invitations.revoke(id, this.now());
      return { id, email: invitation.email, invitation: true };
    }
    const person = await this.find(organizationId, id);
    await this.remove(person);
    return { id, email: person.email, invitation: false };
  }

  private mailInvitation(person: Invitee, invitedBy: string, link: string): Promise<'sent' | 'logged'> {
    const organizationId = mailSafe(person.organizationId);
    const role = person.role === 'owner' ? 'an owner' : 'a read-only member';
    const text = `${mailSafe(invitedBy)} invited you to the organization ${organizationId} on Switchyard as ${role}.\n\nSet your password and sign in (the link works once, for 24 hours):\n${link}\n`;
    return this.mail(person, `You are invited to ${organizationId} on Switchyard`, text, link);
  }

  /** The mail to an address with an account elsewhere: no link (an account is only ever reached through its own sign-in). */
  private mailElsewhere(person: Invitee): Promise<'sent' | 'logged'> {
    const organizationId = mailSafe(person.organizationId);
    return this.mail(
      person,
      `An invitation to ${organizationId} on Switchyard`,
      `Someone invited ${person.email} to the organization ${organizationId} on Switchyard, but this address already has an account on this Switchyard.\nOne address belongs to one organization here: nothing changes for your account. If you want to join, ask the operator.\n`,
      undefined,
    );
  }

  /** Counts one invitation of the organization against its hourly and daily limits, or throws 429. */
  private async reserveInvitation(organizationId: string): Promise<void> {
    const now = this.now();
    const { perHour, perDay } = this.options.limits;
    const attempts = this.options.owners.attempts;
    const hour = await attempts.reserve([{ subject: `invite-hour:${organizationId}`, limit: perHour }], now - HOUR, now);
    if (hour === undefined) throw tooManyInvitations(`${perHour} invitations an hour`, 3600);
    const day = await attempts.reserve([{ subject: `invite-day:${organizationId}`, limit: perDay }], now - DAY, now);
    if (day === undefined) {
      await attempts.release(hour);
      throw tooManyInvitations(`${perDay} invitations a day`, 86_400);
    }
  }

  /** Creates an operator account (no password yet) and returns its set-password link. */
  async createOperator(email: string, baseUrl: string): Promise<IssuedLink> {
    const address = requirePlainEmailAddress(email);
    if ((await this.options.owners.findOwnerByEmail(address)) !== undefined)
      throw invalidParameter('email', `An account for ${address} already exists.`);
    const operator = await this.options.owners.createOwner({
      id: `own_${randomAlphanumeric(16)}`,
      organizationId: OPERATORS_ORGANIZATION,
      email: address,
      role: 'operator',
      passwordHash: null,
      createdAt: this.now(),
    });
    return this.resetLink(operator, baseUrl, 'Your Switchyard operator account');
  }

  /** A new one-time set-password link for the person, mailed to them (without SMTP: logged). */
  async resetLink(person: AccountRecord, baseUrl: string, subject = 'Set your Switchyard password'): Promise<IssuedLink> {
    const link = setPasswordLink(baseUrl, await this.options.accounts.issueLink(person.id));
    const delivery = await this.mail(
      person,
      subject,
      `A link to set the password of ${person.email} on Switchyard (it works once, for 24 hours):\n${link}\n`,
      link,
    );
    return { person, link, delivery };
  }

  /** Changes a person's role; an organization always keeps at least one owner. */
  async setRole(person: AccountRecord, role: 'owner' | 'member'): Promise<void> {
    if (person.role === 'operator') throw invalidParameter('role', 'Operators have no organization role.');
    if (person.role === 'owner' && role !== 'owner') await this.keepOneOwner(person.organizationId);
    await this.options.people.setRole(person.id, role);
  }

  /** Removes a person: their sessions and links end at once (the next request with their cookie is refused). */
  async remove(person: AccountRecord): Promise<void> {
    if (person.role === 'owner') await this.keepOneOwner(person.organizationId);
    await this.options.people.remove(person.id);
  }

  private async keepOneOwner(organizationId: string): Promise<void> {
    if ((await this.options.people.countOwners(organizationId)) <= 1)
      throw new ServiceError({
        status: 409,
        type: 'invalid_request_error',
        code: 'last_owner',
        param: 'role',
        message: 'An organization must keep at least one owner: make someone else an owner first.',
      });
  }

  /**
   * The person's own password change: the current password is required, the new one follows the
   * password rules, and every other session of theirs ends.
   */
  async changePassword(person: AccountRecord, currentSessionId: string, current: string, next: string, address: string): Promise<void> {
    const problem = passwordProblem(next);
    if (problem !== undefined) throw invalidParameter('new_password', problem);
    // Counted and audited like every re-authentication (429 past the limit, `reauthentication.failed`).
    await this.options.accounts.reauthenticate(person, { password: current }, address, 'current_password');
    await this.options.owners.setPasswordHash(person.id, await hashPassword(next));
    await this.options.people.revokeOtherSessions(person.id, currentSessionId, this.now());
    // A link issued before (leaked, mailed, pasted) must not undo the change.
    await this.options.accounts.voidLinks(person.id);
    await this.options.accounts.audit(person, 'password.changed', null, address);
  }

  private async mail(person: Invitee, subject: string, text: string, link: string | undefined): Promise<'sent' | 'logged'> {
    try {
      return await this.options.mailer.send({ to: person.email, subject, text, ...(link === undefined ? {} : { link }) });
    } catch (error) {
      // The transport's text (host, port, server answer) stays in the log; the person asking sees none of it.
      throw new ServiceError({
        status: 502,
        type: 'server_error',
        code: 'service_unavailable',
        message: `The mail to ${person.email} could not be sent. The invitation stays: send it again once mail works (the operator sees why in the log).`,
        cause: error,
      });
    }
  }
}

function tooManyInvitations(limit: string, retryAfterSeconds: number): ServiceError {
  return new ServiceError({
    status: 429,
    type: 'rate_limit_exceeded',
    code: 'too_many_invitations',
    message: `This organization has sent its ${limit}. Try again later, or ask the operator to raise INVITATIONS_PER_HOUR / INVITATIONS_PER_DAY.`,
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

/** Text an inviter controls, as it goes into a mail: printable ASCII of addresses and ids only, the rest `?`. */
function mailSafe(text: string): string {
  return text.slice(0, 254).replace(/[^A-Za-z0-9._@+-]/g, '?');
}

export type { AccountRole };
