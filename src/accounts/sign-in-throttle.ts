/**
 * The dashboard's sign-in throttle (OWASP ASVS 2.2.1: throttling that cannot be raced, and no account
 * lockout by third parties). Every attempt is reserved in the database before its password is checked
 * (sign-in-attempts-repository.ts), so concurrent guesses on any number of instances evaluate at most
 * the limit, and the rest are refused with 429 without a password check.
 *
 * Who is counted against what:
 * - an unknown device: the account (`account:<email>`, 5 per window) and the address (`address:<ip>`, 20);
 * - a known device, one that proves itself by a valid session cookie of the account (`session:<id>`)
 *   or by an address the owner signed in from recently (`device:<owner id> <ip>`, plus the address):
 *   its own count, not the account's. Failures a third party caused elsewhere do not refuse it; while
 *   the account is over its limit its attempts are only slowed (`lockedAccountDelayMs`).
 * Successes reset nothing: an address's failures stay counted whatever account succeeds from it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceError } from '../core/service-error.ts';
import type { ThrottleSubject } from '../db/repositories/sign-in-attempts-repository.ts';
import type { AccountRecord, OwnersRepository } from '../db/repositories/owners-repository.ts';

export interface SignInThrottleOptions {
  /** Failures per account (and per known device) within `windowMs` before attempts are refused. */
  maxFailuresPerAccount: number;
  /** Failures per address within `windowMs`, whatever the accounts. */
  maxFailuresPerAddress: number;
  /** The counting window, milliseconds. */
  windowMs: number;
  /** An address the owner signed in from within this long is a known device, milliseconds. */
  knownDeviceWindowMs: number;
  /** How long a known device's attempt waits while its account is over the limit, milliseconds. */
  lockedAccountDelayMs: number;
  now: () => number;
}

/** A reserved attempt: settle it once the password (and second factor) is checked. */
export interface Reservation {
  /** The attempt succeeded: it stops counting as a failure. */
  succeed(): Promise<void>;
  /** The attempt was no guess (a second factor not sent yet): it is forgotten. */
  release(): Promise<void>;
}

export interface AttemptSource {
  email: string;
  address: string;
  /** The account behind the email, when there is one. */
  owner: AccountRecord | undefined;
  /** The id of a valid, unexpired session of that account the request carried, if any. */
  sessionId: string | undefined;
}

export class SignInThrottle {
  constructor(
    private readonly repository: OwnersRepository,
    private readonly options: SignInThrottleOptions,
  ) {}

  /** Reserves a sign-in attempt, or throws 429 `too_many_sign_in_attempts` (no password is checked then). */
  async reserveSignIn(source: AttemptSource): Promise<Reservation> {
    const now = this.options.now();
    const accountSubject = `account:${source.email}`;
    const addressSubject: ThrottleSubject = { subject: `address:${source.address}`, limit: this.options.maxFailuresPerAddress };
    const perAccount = this.options.maxFailuresPerAccount;
    let subjects: ThrottleSubject[];
    if (source.owner !== undefined && source.sessionId !== undefined) {
      subjects = [{ subject: `session:${source.sessionId}`, limit: perAccount }];
    } else if (
      source.owner !== undefined &&
      (await this.repository.signedInFrom(source.owner.id, source.address, now - this.options.knownDeviceWindowMs))
    ) {
      subjects = [{ subject: `device:${source.owner.id} ${source.address}`, limit: perAccount }, addressSubject];
    } else {
      subjects = [{ subject: accountSubject, limit: perAccount }, addressSubject];
    }
    const reservation = await this.reserve(subjects, now);
    if (subjects[0]!.subject !== accountSubject) {
      // A known device: the account's own count (what others did) only slows it down.
      const accountFailures = await this.repository.attempts.failures(accountSubject, now - this.options.windowMs);
      if (accountFailures >= perAccount) await sleep(this.options.lockedAccountDelayMs);
    }
    return reservation;
  }

  /** Reserves one check of a signed-in owner's password or code (turning the second factor on or off). */
  reserveReauthentication(ownerId: string): Promise<Reservation> {
    return this.reserve([{ subject: `reauth:${ownerId}`, limit: this.options.maxFailuresPerAccount }], this.options.now());
  }

  private async reserve(subjects: ThrottleSubject[], now: number): Promise<Reservation> {
    const since = now - this.options.windowMs;
    const ids = await this.repository.attempts.reserve(subjects, since, now);
    if (ids === undefined) throw await this.refusal(subjects, since, now);
    let settled = false;
    const settle = async (action: (ids: number[]) => Promise<void>): Promise<void> => {
      if (settled) return;
      settled = true;
      await action(ids);
    };
    return {
      succeed: () => settle((reserved) => this.repository.attempts.markSucceeded(reserved)),
      release: () => settle((reserved) => this.repository.attempts.release(reserved)),
    };
  }

  /** The 429, with `retry-after` saying when the oldest failure of a full subject leaves the window. */
  private async refusal(subjects: ThrottleSubject[], since: number, now: number): Promise<ServiceError> {
    let retryAt = now + 1000;
    for (const { subject, limit } of subjects) {
      if ((await this.repository.attempts.failures(subject, since)) < limit) continue;
      const oldest = await this.repository.attempts.oldestFailure([subject], since);
      if (oldest !== undefined) retryAt = Math.max(retryAt, oldest + this.options.windowMs);
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((retryAt - now) / 1000));
    return new ServiceError({
      status: 429,
      type: 'rate_limit_exceeded',
      code: 'too_many_sign_in_attempts',
      message: `Too many failed sign-in attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`,
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}
