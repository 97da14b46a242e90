/**
 * Who gets in, as what: the provider's claims matched against the configured rules (config/sso-config.ts).
 * An operator rule wins over every organization rule (and is the only way to become an operator);
 * otherwise the first matching rule names the organization, and the person is its owner when any
 * matching rule of that organization says owner, else a member. No matching rule: no access.
 */
import type { SsoRule } from '../../config/index.ts';

export type MappedAccess = { role: 'operator' } | { role: 'owner' | 'member'; organization: string };

/** The claims rules read: the ID token's, plus `email_domain` from a trusted email. */
export type Claims = Record<string, unknown>;

/** A claim by its exact name (URL-like custom claims contain dots), else by a dotted path (`realm_access.roles`). */
export function claimValue(claims: Claims, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let current: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current) || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Whether a claim equals the rule's value, or, being an array (`groups`, `roles`), contains it. Strings compare exactly. */
export function ruleMatches(rule: SsoRule, claims: Claims): boolean {
  const value = claimValue(claims, rule.claim);
  if (Array.isArray(value)) return value.some((entry) => entry === rule.value);
  return value === rule.value;
}

export function accessFromClaims(rules: readonly SsoRule[], claims: Claims): MappedAccess | undefined {
  const matched = rules.filter((rule) => ruleMatches(rule, claims));
  if (matched.some((rule) => rule.role === 'operator')) return { role: 'operator' };
  const first = matched.find((rule) => rule.organization !== undefined);
  if (first?.organization === undefined) return undefined;
  const organization = first.organization;
  const owner = matched.some((rule) => rule.organization === organization && rule.role === 'owner');
  return { role: owner ? 'owner' : 'member', organization };
}
