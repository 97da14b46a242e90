/**
 * The deployment-state port: what the router of services/generation/routing shares between instances
 * about each deployment of a model (one backend: a provider, one of its keys, an upstream model name).
 * In memory for one instance, in Redis when instances share one (same choice as the limit store).
 *
 * - Cooldowns: a deployment that failed before its first byte is skipped until an instant.
 * - Minute usage: requests and tokens sent to it in the current UTC minute, checked and counted in one
 *   atomic step (`acquire`), so its own `requestsPerMinute` is never exceeded across instances.
 * - In flight: requests started and not yet ended (least-busy routing, `switchyard routes`).
 * - Latency: a moving average of its time to first token (latency routing).
 *
 * Methods that only report (`release`, `correctTokens`, `coolDown`, `observeLatency`) return at once
 * and never throw: routing must not fail a request because a report could not be written.
 */

/** Which deployment: the public model id and the deployment's id (provider id, `#n` for its n-th key). */
export interface DeploymentRef {
  readonly model: string;
  readonly deployment: string;
}

/** What the upstream allows one deployment; 0 means unlimited. */
export interface DeploymentLimits {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

export interface DeploymentState {
  /** Skipped until this instant (ms since epoch); 0 when not cooling. Compare with the clock. */
  coolingUntilMs: number;
  /** Requests started and not yet ended. */
  inFlight: number;
  /** Moving average of time to first token, ms; null before the first measurement. */
  latencyMs: number | null;
  /** Requests counted in the current minute. */
  requests: number;
  /** Tokens counted in the current minute. */
  tokens: number;
}

/** A successful `acquire`: the minute it was counted in (token corrections go to that minute). */
export interface Acquired {
  minute: number;
}

export interface DeploymentStateStore {
  /** The state of each deployment, in order (one round trip on Redis). */
  read(refs: readonly DeploymentRef[]): Promise<DeploymentState[]>;
  /**
   * Atomically: when one more request and `tokens` more tokens fit the deployment's minute limits,
   * counts them and one more in flight, and returns the minute; otherwise counts nothing and returns
   * null. A request larger than the whole token budget is let through when the minute is still empty
   * (it could never fit otherwise).
   */
  acquire(ref: DeploymentRef, limits: DeploymentLimits, tokens: number): Promise<Acquired | null>;
  /** One request fewer in flight. */
  release(ref: DeploymentRef): void;
  /** Replaces the tokens counted at `acquire` by the real figure: adds `delta` (may be negative) to that minute. */
  correctTokens(ref: DeploymentRef, minute: number, delta: number): void;
  /** Skips the deployment until `untilMs` (a later cooldown already set is kept). */
  coolDown(ref: DeploymentRef, untilMs: number): void;
  /** Folds one time-to-first-token measurement into the moving average. */
  observeLatency(ref: DeploymentRef, latencyMs: number): void;
  close(): Promise<void>;
}

/** Weight of the newest measurement in the latency average. */
export const LATENCY_SMOOTHING = 0.3;

/** The minute index (since the epoch) of an instant. */
export function minuteOf(nowMs: number): number {
  return Math.floor(nowMs / 60_000);
}

/** The rule both backends apply (the Redis script mirrors it). */
export function fitsLimits(limits: DeploymentLimits, requests: number, tokens: number, adding: number): boolean {
  if (limits.requestsPerMinute > 0 && requests + 1 > limits.requestsPerMinute) return false;
  if (limits.tokensPerMinute > 0 && tokens > 0 && tokens + adding > limits.tokensPerMinute) return false;
  return true;
}
