/**
 * Who may call which dashboard API route: anyone (sign-in), any signed-in person of an organization,
 * its owners only (not read-only members), or operators only. Operators reach only their own account
 * routes of the owners' API (session, sign-out, sessions, TOTP, password), never an organization's.
 * People of a suspended organization read only (`suspendedRefusal`).
 */
import type { AccountRecord } from '../db/repositories/owners-repository.ts';

export type Access = 'public' | 'member' | 'owner' | 'operator';

/** A person's own account (session, sign-out, sessions, TOTP, password): every signed-in person, operators included. */
const ACCOUNT_ROUTES = /^\/dashboard\/api\/(session|sign-out|sessions|totp|password)(\/|$)/;

/** Why a person of `role` may not call a route of `access` at `url`, or undefined. */
export function accessRefusal(access: Access, role: AccountRecord['role'], url: string): string | undefined {
  if (access === 'operator') return role === 'operator' ? undefined : 'Only operators may do this.';
  if (role === 'operator' && !(access === 'member' && ACCOUNT_ROUTES.test(url)))
    return "Operators work in the operator area (/dashboard/operator), not in an organization's pages.";
  if (access === 'owner' && role !== 'owner') return 'Members can look but not change: ask an owner.';
  return undefined;
}

/** What a person of a suspended organization may still do: read (but not download files), and their own account. */
const DOWNLOADS = /^\/dashboard\/api\/files\/[^/]+\/content$/;

/**
 * Why a person of a suspended organization may not call this route, or undefined: the dashboard is
 * read-only (no key, upload, invitation, webhook or batch change) and file contents are not served;
 * sign-in, their sessions, password and second factor stay theirs.
 */
export function suspendedRefusal(method: string, url: string): string | undefined {
  if (ACCOUNT_ROUTES.test(url)) return undefined;
  if ((method === 'GET' || method === 'HEAD') && !DOWNLOADS.test(url)) return undefined;
  return 'This organization is suspended: the dashboard is read-only and files cannot be downloaded until the operator reactivates it.';
}
