/**
 * Who may call which dashboard API route: anyone (sign-in), any signed-in person of an organization,
 * its owners only (not read-only members), or operators only. Operators reach only their own account
 * routes of the owners' API (session, sign-out, sessions, TOTP, password), never an organization's.
 */
import type { OwnerRecord } from '../db/repositories/owners-repository.ts';

export type Access = 'public' | 'member' | 'owner' | 'operator';

/** A person's own account (session, sign-out, sessions, TOTP, password): every signed-in person, operators included. */
const ACCOUNT_ROUTES = /^\/dashboard\/api\/(session|sign-out|sessions|totp|password)(\/|$)/;

/** Why a person of `role` may not call a route of `access` at `url`, or undefined. */
export function accessRefusal(access: Access, role: OwnerRecord['role'], url: string): string | undefined {
  if (access === 'operator') return role === 'operator' ? undefined : 'Only operators may do this.';
  if (role === 'operator' && !(access === 'member' && ACCOUNT_ROUTES.test(url)))
    return "Operators work in the operator area (/dashboard/operator), not in an organization's pages.";
  if (access === 'owner' && role !== 'owner') return 'Members can look but not change: ask an owner.';
  return undefined;
}
