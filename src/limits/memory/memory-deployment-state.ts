/**
 * In-process deployment state: one instance, no I/O. Every method is synchronous work behind the
 * port's promises, so routing on it costs a few hundred nanoseconds.
 */
import { systemClock, type Clock } from '../clock.ts';
import {
  fitsLimits,
  LATENCY_SMOOTHING,
  minuteOf,
  type Acquired,
  type DeploymentLimits,
  type DeploymentRef,
  type DeploymentState,
  type DeploymentStateStore,
} from '../deployment-state.ts';

interface Entry {
  coolingUntilMs: number;
  inFlight: number;
  latencyMs: number | null;
  minute: number;
  requests: number;
  tokens: number;
}

export class MemoryDeploymentState implements DeploymentStateStore {
  private readonly entries = new Map<string, Entry>();
  /** Refs are long-lived objects of the router: their entry is found without building a string. */
  private readonly byRef = new WeakMap<DeploymentRef, Entry>();
  private readonly clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async read(refs: readonly DeploymentRef[]): Promise<DeploymentState[]> {
    const minute = minuteOf(this.clock.now());
    return refs.map((ref) => {
      const entry = this.entry(ref, minute);
      return {
        coolingUntilMs: entry.coolingUntilMs,
        inFlight: entry.inFlight,
        latencyMs: entry.latencyMs,
        requests: entry.requests,
        tokens: entry.tokens,
      };
    });
  }

  async acquire(ref: DeploymentRef, limits: DeploymentLimits, tokens: number): Promise<Acquired | null> {
    const minute = minuteOf(this.clock.now());
    const entry = this.entry(ref, minute);
    if (!fitsLimits(limits, entry.requests, entry.tokens, tokens)) return null;
    entry.requests += 1;
    entry.tokens += tokens;
    entry.inFlight += 1;
    return { minute };
  }

  release(ref: DeploymentRef): void {
    const entry = this.entry(ref, minuteOf(this.clock.now()));
    if (entry.inFlight > 0) entry.inFlight -= 1;
  }

  correctTokens(ref: DeploymentRef, minute: number, delta: number): void {
    const entry = this.entry(ref, minuteOf(this.clock.now()));
    // A minute that has ended is history: nothing to correct.
    if (entry.minute === minute) entry.tokens = Math.max(0, entry.tokens + delta);
  }

  coolDown(ref: DeploymentRef, untilMs: number): void {
    const entry = this.entry(ref, minuteOf(this.clock.now()));
    entry.coolingUntilMs = Math.max(entry.coolingUntilMs, untilMs);
  }

  observeLatency(ref: DeploymentRef, latencyMs: number): void {
    const entry = this.entry(ref, minuteOf(this.clock.now()));
    entry.latencyMs = entry.latencyMs === null ? latencyMs : entry.latencyMs * (1 - LATENCY_SMOOTHING) + latencyMs * LATENCY_SMOOTHING;
  }

  async close(): Promise<void> {}

  private entry(ref: DeploymentRef, minute: number): Entry {
    let entry = this.byRef.get(ref);
    if (entry === undefined) {
      const key = `${ref.model}\u0000${ref.deployment}`;
      entry = this.entries.get(key);
      if (entry === undefined) {
        entry = { coolingUntilMs: 0, inFlight: 0, latencyMs: null, minute, requests: 0, tokens: 0 };
        this.entries.set(key, entry);
      }
      this.byRef.set(ref, entry);
    }
    if (entry.minute !== minute) {
      entry.minute = minute;
      entry.requests = 0;
      entry.tokens = 0;
    }
    return entry;
  }
}
