/**
 * Single flight: of concurrent identical misses, one (the leader) asks the upstream and the others wait
 * for its entry. On one instance, followers wait on the leader's promise; across instances, the
 * leader holds a lease in the shared store (`SET NX PX` on Redis) and one request per other instance
 * polls for the entry, its own local followers waiting on it. A follower stops waiting when the entry
 * arrives (a hit), when the lease is gone without an entry (the leader failed: everyone tries on their
 * own), or after `followerWaitMs` (then it asks the upstream itself).
 */
import { randomHex } from '../../core/ids.ts';
import type { CachedAnswer } from './cached-answer.ts';
import type { ResponseTiers } from './response-tiers.ts';

/** What joining a flight gives: a cached answer, the lead (call `done` when finished, stored or not), or nothing (ask alone). */
export type FlightTicket =
  { role: 'hit'; answer: CachedAnswer; collapsed: true } | { role: 'leader'; done: () => Promise<void> } | { role: 'alone' };

export interface FlightOptions {
  /** How long a follower waits, ms. */
  followerWaitMs: number;
  /** The leader's lease, ms. */
  leaseMs: number;
  /** Between two polls of the shared store, ms. Default 20. */
  pollIntervalMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Resolves with true when `promise` settles within `ms`, false otherwise. */
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class Flights {
  /** Keys this instance is asking about, resolved when its local leader is done (however it ended). */
  private readonly local = new Map<string, Promise<void>>();
  private readonly pollIntervalMs: number;

  constructor(
    private readonly tiers: ResponseTiers,
    private readonly options: FlightOptions,
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 20;
  }

  /** Requests of this instance waiting on a leader (for tests and metrics). */
  get inFlight(): number {
    return this.local.size;
  }

  async join(organizationId: string, key: string): Promise<FlightTicket> {
    const pending = this.local.get(key);
    if (pending !== undefined) {
      await settlesWithin(pending, this.options.followerWaitMs);
      const answer = this.tiers.getLocal(organizationId, key);
      return answer === undefined ? { role: 'alone' } : { role: 'hit', answer, collapsed: true };
    }
    let finish!: () => void;
    const flight = new Promise<void>((resolve) => (finish = resolve));
    this.local.set(key, flight);
    const land = () => {
      if (this.local.get(key) === flight) this.local.delete(key);
      finish();
    };
    try {
      return await this.lead(organizationId, key, land);
    } catch (error) {
      land();
      throw error;
    }
  }

  private async lead(organizationId: string, key: string, land: () => void): Promise<FlightTicket> {
    const token = randomHex(32);
    const deadline = Date.now() + this.options.followerWaitMs;
    for (;;) {
      if (await this.tiers.claim(key, token, this.options.leaseMs)) {
        // The previous leader may have stored the entry and let go just before the claim.
        const answer = this.tiers.hasSharedStore
          ? await this.tiers.getShared(organizationId, key)
          : this.tiers.getLocal(organizationId, key);
        if (answer === undefined)
          return {
            role: 'leader',
            done: async () => {
              await this.tiers.release(key, token);
              land();
            },
          };
        await this.tiers.release(key, token);
        land();
        return { role: 'hit', answer, collapsed: true };
      }
      // Another instance leads: wait for its entry.
      const polled = await this.tiers.poll(organizationId, key);
      if (polled.answer !== undefined) {
        land();
        return { role: 'hit', answer: polled.answer, collapsed: true };
      }
      if (!polled.claimed || Date.now() >= deadline) {
        // The leader let go without an entry (it failed) or took too long: ask the upstream alone.
        land();
        return { role: 'alone' };
      }
      await sleep(this.pollIntervalMs);
    }
  }
}
