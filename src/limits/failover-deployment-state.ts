/**
 * The shared (Redis) deployment state behind a circuit breaker (`routing.onStoreFailure`):
 *
 * - `local` (default): while Redis cannot be reached, route on this instance's own memory state
 *   (cooldowns, minute usage, in-flight counts and latencies seen here only). Per-deployment minute
 *   limits are then enforced per instance.
 * - `closed`: refuse routed requests at once with 500 `service_unavailable` and `retry-after`.
 *
 * Reports (`release`, `correctTokens`, `coolDown`, `observeLatency`) never throw: while the breaker is
 * open they go to the local state. A request acquired on one side is released on the same side.
 */
import type { CircuitBreaker } from '../core/circuit-breaker.ts';
import type { Clock } from './clock.ts';
import type { Acquired, DeploymentLimits, DeploymentRef, DeploymentState, DeploymentStateStore } from './deployment-state.ts';
import { MemoryDeploymentState } from './memory/memory-deployment-state.ts';

export interface FailoverDeploymentStateOptions {
  primary: DeploymentStateStore;
  breaker: CircuitBreaker;
  policy: 'local' | 'closed';
  clock?: Clock;
}

export class FailoverDeploymentState implements DeploymentStateStore {
  private readonly primary: DeploymentStateStore;
  private readonly breaker: CircuitBreaker;
  private readonly policy: 'local' | 'closed';
  private readonly local: MemoryDeploymentState;
  /** Acquisitions made on the local state, per ref, not yet released. */
  private readonly localInFlight = new WeakMap<DeploymentRef, number>();

  constructor(options: FailoverDeploymentStateOptions) {
    this.primary = options.primary;
    this.breaker = options.breaker;
    this.policy = options.policy;
    this.local = new MemoryDeploymentState(options.clock === undefined ? {} : { clock: options.clock });
  }

  read(refs: readonly DeploymentRef[]): Promise<DeploymentState[]> {
    return this.breaker.orElse(
      () => this.primary.read(refs),
      () => this.whenLocal(() => this.local.read(refs)),
    );
  }

  acquire(ref: DeploymentRef, limits: DeploymentLimits, tokens: number): Promise<Acquired | null> {
    return this.breaker.orElse(
      () => this.primary.acquire(ref, limits, tokens),
      () =>
        this.whenLocal(async () => {
          const acquired = await this.local.acquire(ref, limits, tokens);
          if (acquired !== null) this.localInFlight.set(ref, (this.localInFlight.get(ref) ?? 0) + 1);
          return acquired;
        }),
    );
  }

  /** The degraded path: the local state, or a fast refusal under `closed`. */
  private whenLocal<T>(use: () => Promise<T>): Promise<T> {
    if (this.policy === 'closed') return Promise.reject(this.breaker.unavailable());
    return use();
  }

  release(ref: DeploymentRef): void {
    const local = this.localInFlight.get(ref) ?? 0;
    if (local > 0) {
      this.localInFlight.set(ref, local - 1);
      this.local.release(ref);
    } else if (!this.breaker.isOpen) this.primary.release(ref);
  }

  correctTokens(ref: DeploymentRef, minute: number, delta: number): void {
    if (this.breaker.isOpen) this.local.correctTokens(ref, minute, delta);
    else this.primary.correctTokens(ref, minute, delta);
  }

  coolDown(ref: DeploymentRef, untilMs: number): void {
    // A cooldown matters on both sides: the local state routes now, the shared one after the heal.
    this.local.coolDown(ref, untilMs);
    if (!this.breaker.isOpen) this.primary.coolDown(ref, untilMs);
  }

  observeLatency(ref: DeploymentRef, latencyMs: number): void {
    this.local.observeLatency(ref, latencyMs);
    if (!this.breaker.isOpen) this.primary.observeLatency(ref, latencyMs);
  }

  async close(): Promise<void> {
    await this.primary.close();
    await this.local.close();
  }
}
