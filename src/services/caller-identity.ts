/**
 * Who is calling, as the use cases need to know it: the key's identity and the limits it runs under.
 * Declared here, beside `caller.ts`, so that services and batches depend on the identity and not on
 * `accounts/`, which produces it (`accounts/authenticator.ts` from a key, `accounts/plans.ts` the limits).
 */
import type { Permission } from '../config/index.ts';

/** Who is calling: attached to every authenticated request. */
export interface AuthContext {
  keyId: string;
  organizationId: string;
  tier: string;
  permissions: ReadonlySet<Permission>;
  /** Milliseconds since epoch, or null. */
  expiresAt: number | null;
  /**
   * The limits this key runs under, from its tier and its organization's plan (`accounts/plans.ts` `keyLimits`);
   * absent for contexts built without plans (then the key's tier alone decides).
   */
  limits?: KeyPlanLimits;
}

/** The limits one key runs under (structurally a limits/ `LimitPolicy`) and its organization's batch figures. */
export interface KeyPlanLimits {
  requestsPerMinute: number;
  tokensPerMinute: number;
  tokensPerDay: number;
  tokensPerMonth: number;
  concurrentBatches: number;
  maxRequestsPerBatch: number;
  organizationRequestsPerMinute: number;
  organizationTokensPerMinute: number;
  /** The organization's plan (tier name). */
  plan: string;
}
