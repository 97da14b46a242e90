/**
 * People in an organization and the operators themselves: owners invite members by email (owner or
 * read-only), change roles and remove people (their sessions end at once); everyone changes their own
 * password with the current one; the operator issues a new set-password link for anyone. Invitations
 * and links are mailed (mailer.ts). Sign-in, sessions, TOTP and CSRF stay in owner-accounts.ts.
 */
import { invalidParameter, notFound, ServiceError } from '../core/service-error.ts';
import type { OwnerRecord, OwnerRole, OwnersRepository } from '../db/repositories/owners-repository.ts';
import type { PeopleRepository, PersonRecord } from '../db/repositories/people-repository.ts';
import { OPERATORS_ORGANIZATION } from '../db/repositories/organizations-repository.ts';
import { randomAlphanumeric } from '../core/ids.ts';
import type { Mailer } from './mailer.ts';
import type { OwnerAccounts } from './owner-accounts.ts';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.ts';

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

/** The link a person opens to set a password; the token is in the fragment, so it never reaches a server log. */
export function setPasswordLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard/set-password#token=${token}`;
}

export interface PeopleServiceOptions {
  accounts: OwnerAccounts;
  owners: OwnersRepository;
  people: PeopleRepository;
  mailer: Mailer;
  now?: () => number;
}

export interface IssuedLink {
  person: OwnerRecord;
  link: string;
  /** `sent` by SMTP, or `logged` without SMTP. */
  delivery: 'sent' | 'logged';
}

export class PeopleService {
  private readonly now: () => number;

  constructor(private readonly options: PeopleServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  list(organizationId: string): Promise<PersonRecord[]> {
    return this.options.people.list(organizationId);
  }

  /** The person, only if they belong to `organizationId`; 404 otherwise. */
  async find(organizationId: string, personId: string): Promise<OwnerRecord> {
    const person = await this.options.owners.findOwnerById(personId);
    if (person === undefined || person.organizationId !== organizationId)
      throw notFound('person_not_found', `No person ${personId} in organization ${organizationId}.`, 'person');
    return person;
  }

  /** Invites `email` to the organization with `role`: an account without a password and a mailed link. */
  async invite(organizationId: string, email: string, role: 'owner' | 'member', invitedBy: string, baseUrl: string): Promise<IssuedLink> {
    const { owner, linkToken } = await this.options.accounts.createOwner({ organization: organizationId, email, role });
    const link = setPasswordLink(baseUrl, linkToken!);
    const delivery = await this.mail(
      owner,
      `You are invited to ${organizationId} on Switchyard`,
      `${invitedBy} invited you to the organization ${organizationId} on Switchyard as ${role === 'owner' ? 'an owner' : 'a read-only member'}.\n\nSet your password and sign in (the link works once, for 24 hours):\n${link}\n`,
      link,
    );
    return { person: owner, link, delivery };
  }

  /** Creates an operator account (no password yet) and returns its set-password link. */
  async createOperator(email: string, baseUrl: string): Promise<IssuedLink> {
    const address = email.trim().toLowerCase();
    if (!EMAIL_PATTERN.test(address) || address.length > 254) throw invalidParameter('email', `"${email}" is not an email address.`);
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
  async resetLink(person: OwnerRecord, baseUrl: string, subject = 'Set your Switchyard password'): Promise<IssuedLink> {
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
  async setRole(person: OwnerRecord, role: 'owner' | 'member'): Promise<void> {
    if (person.role === 'operator') throw invalidParameter('role', 'Operators have no organization role.');
    if (person.role === 'owner' && role !== 'owner') await this.keepOneOwner(person.organizationId);
    await this.options.people.setRole(person.id, role);
  }

  /** Removes a person: their sessions and links end at once (the next request with their cookie is refused). */
  async remove(person: OwnerRecord): Promise<void> {
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
  async changePassword(person: OwnerRecord, currentSessionId: string, current: string, next: string, address: string): Promise<void> {
    if (person.passwordHash === null || !(await verifyPassword(current, person.passwordHash)))
      throw invalidParameter('current_password', 'The current password is wrong.');
    const problem = passwordProblem(next);
    if (problem !== undefined) throw invalidParameter('new_password', problem);
    await this.options.owners.setPasswordHash(person.id, await hashPassword(next));
    await this.options.people.revokeOtherSessions(person.id, currentSessionId, this.now());
    await this.options.accounts.audit(person, 'password.changed', null, address);
  }

  private async mail(person: OwnerRecord, subject: string, text: string, link: string): Promise<'sent' | 'logged'> {
    try {
      return await this.options.mailer.send({ to: person.email, subject, text, link });
    } catch (error) {
      throw new ServiceError({
        status: 502,
        type: 'server_error',
        code: 'service_unavailable',
        message: `The mail to ${person.email} could not be sent (${error instanceof Error ? error.message : String(error)}). The account exists: issue a new link once mail works.`,
        cause: error,
      });
    }
  }
}

export type { OwnerRole };
