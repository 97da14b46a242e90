/**
 * The two tiers of the response cache: a bounded in-process LRU (`lru-cache`, sized in bytes of the
 * stored JSON, entries past `maxEntryBytes` refused) in front of the store shared by every instance.
 * The in-process tier keeps parsed entries, so a hit there costs no parse. Every failure of the shared
 * store is a miss (or a store skipped), never a failed request; while its circuit breaker is open the
 * shared store is not called at all.
 */
import { LRUCache } from 'lru-cache';
import type { CircuitBreaker } from '../../core/circuit-breaker.ts';
import { parseCachedAnswer, type CachedAnswer } from './cached-answer.ts';
import type { SharedResponseStore } from './stores/shared-response-store.ts';

interface MemoryEntry {
  organizationId: string;
  answer: CachedAnswer;
}

export interface ResponseTiersOptions {
  /** Bytes the in-process tier holds at most. */
  memoryBytes: number;
  /** Largest entry stored, bytes (stored JSON). */
  maxEntryBytes: number;
  shared?: SharedResponseStore | undefined;
  /** The shared store's dependency breaker (Redis's or the database's). */
  breaker?: CircuitBreaker | undefined;
  /** Told of each failed call to the shared store (counted and logged by the owner). */
  onSharedFailure?: (error: unknown) => void;
  now?: () => number;
}

export class ResponseTiers {
  private readonly memory: LRUCache<string, MemoryEntry>;
  private readonly shared: SharedResponseStore | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ResponseTiersOptions) {
    this.now = options.now ?? Date.now;
    this.shared = options.shared;
    this.memory = new LRUCache<string, MemoryEntry>({
      maxSize: options.memoryBytes,
      // Each `set` gives the entry's size (its stored JSON's length): nothing is serialised twice.
      maxEntrySize: options.maxEntryBytes,
    });
  }

  /** Whether a store shared with other instances is configured (single flight across instances). */
  get hasSharedStore(): boolean {
    return this.shared !== undefined;
  }

  /** Bytes held in the in-process tier. */
  get memoryBytes(): number {
    return this.memory.calculatedSize;
  }

  /** Runs a call on the shared store: `fallback` when there is none, its breaker is open, or the call fails. */
  private async onShared<T>(call: (store: SharedResponseStore) => Promise<T>, fallback: T): Promise<T> {
    const shared = this.shared;
    const breaker = this.options.breaker;
    if (shared === undefined || breaker?.isOpen === true) return fallback;
    try {
      return await call(shared);
    } catch (error) {
      breaker?.recordFailure(error);
      this.options.onSharedFailure?.(error);
      return fallback;
    }
  }

  /** The live entry for `key`: the in-process tier, then the shared store (kept in-process from then on). */
  async get(organizationId: string, key: string): Promise<CachedAnswer | undefined> {
    const local = this.getLocal(organizationId, key);
    if (local !== undefined) return local;
    return this.getShared(organizationId, key);
  }

  /** The in-process tier only (no await: a hit here costs no promise beyond the caller's). */
  getLocal(organizationId: string, key: string): CachedAnswer | undefined {
    const entry = this.memory.get(key);
    if (entry === undefined || entry.organizationId !== organizationId) return undefined;
    if (entry.answer.expiresAtMs <= this.now()) {
      this.memory.delete(key);
      return undefined;
    }
    return entry.answer;
  }

  /** The shared store only; an entry found is kept in-process. */
  async getShared(organizationId: string, key: string): Promise<CachedAnswer | undefined> {
    const text = await this.onShared((store) => store.get(organizationId, key), undefined);
    return text === undefined ? undefined : this.keepLocal(organizationId, key, text);
  }

  /** Parses a stored entry and keeps it in-process; undefined when damaged or expired. */
  keepLocal(organizationId: string, key: string, text: string): CachedAnswer | undefined {
    const answer = parseCachedAnswer(text);
    if (answer === undefined || answer.expiresAtMs <= this.now()) return undefined;
    this.setLocal(organizationId, key, answer, Buffer.byteLength(text));
    return answer;
  }

  private setLocal(organizationId: string, key: string, answer: CachedAnswer, bytes: number): void {
    const ttl = answer.expiresAtMs - this.now();
    if (ttl <= 0 || bytes > this.options.maxEntryBytes) return;
    this.memory.set(key, { organizationId, answer }, { size: Math.max(1, bytes), ttl });
  }

  /** Stores an entry in both tiers; returns its size in bytes, 0 when it is too large to be stored. */
  async set(organizationId: string, key: string, answer: CachedAnswer): Promise<number> {
    const text = JSON.stringify(answer);
    const bytes = Buffer.byteLength(text);
    if (bytes > this.options.maxEntryBytes) return 0;
    this.setLocal(organizationId, key, answer, bytes);
    await this.onShared((store) => store.set(organizationId, key, text, answer.expiresAtMs - this.now()), undefined);
    return bytes;
  }

  /** The organization's entries in this instance's tier. */
  countOrganization(organizationId: string): number {
    let count = 0;
    for (const entry of this.memory.values()) if (entry.organizationId === organizationId) count++;
    return count;
  }

  /** Drops the organization's entries from this instance's tier (a purge made on any instance). */
  dropOrganization(organizationId: string): number {
    let dropped = 0;
    for (const [key, entry] of this.memory.entries()) {
      if (entry.organizationId !== organizationId) continue;
      this.memory.delete(key);
      dropped++;
    }
    return dropped;
  }

  /**
   * Deletes every entry of the organization, in this instance and in the shared store (which tells the
   * other instances). Unlike a lookup, a purge reports a shared-store failure: the owner must know.
   */
  async purge(organizationId: string): Promise<number> {
    const dropped = this.dropOrganization(organizationId);
    if (this.shared === undefined) return dropped;
    return Math.max(dropped, await this.shared.purgeOrganization(organizationId));
  }

  /** Takes the leader's lease; true without a shared store (this instance alone decides) or while it is away. */
  claim(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.onShared((store) => store.claim(key, token, leaseMs), true);
  }

  release(key: string, token: string): Promise<void> {
    return this.onShared((store) => store.release(key, token), undefined);
  }

  /** What a follower polls: the entry (parsed, kept in-process) and whether the lease is held; unheld when the store is away. */
  async poll(organizationId: string, key: string): Promise<{ answer: CachedAnswer | undefined; claimed: boolean }> {
    const polled = await this.onShared((store) => store.poll(organizationId, key), { value: undefined, claimed: false });
    const answer = polled.value === undefined ? undefined : this.keepLocal(organizationId, key, polled.value);
    return { answer, claimed: polled.claimed };
  }

  /** Empties the in-process tier and closes the shared store's own connections (shutdown). */
  async close(): Promise<void> {
    this.memory.clear();
    await this.shared?.close?.();
  }
}
