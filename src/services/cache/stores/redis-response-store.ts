/**
 * The shared response store on Redis: one string per entry with its TTL (`PX`), the leader's lease as
 * `SET NX PX` (released by a script only by its holder), the purge of an organization by a `SCAN` over
 * its key prefix, and a pub/sub message telling every instance to drop the organization from its
 * in-process tier. Redis's own `maxmemory` policy bounds the shared tier (README "Response cache").
 */
import type { Redis } from 'ioredis';
import type { SharedResponseStore } from './shared-response-store.ts';

const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Glob characters of `SCAN MATCH`, escaped so that an organization id matches only itself. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (character) => `\\${character}`);
}

export class RedisResponseStore implements SharedResponseStore {
  readonly name = 'redis';
  private subscriber: Redis | undefined;

  constructor(
    private readonly redis: Redis,
    /** Start of every key (config `redisPrefix`). */
    private readonly prefix: string,
  ) {}

  private entryKey(organizationId: string, key: string): string {
    return `${this.prefix}rc:e:${organizationId}:${key}`;
  }

  private leaseKey(key: string): string {
    return `${this.prefix}rc:l:${key}`;
  }

  private get purgeChannel(): string {
    return `${this.prefix}rc:purge`;
  }

  async get(organizationId: string, key: string): Promise<string | undefined> {
    return (await this.redis.get(this.entryKey(organizationId, key))) ?? undefined;
  }

  async set(organizationId: string, key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.entryKey(organizationId, key), value, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async purgeOrganization(organizationId: string): Promise<number> {
    const pattern = `${escapeGlob(this.entryKey(organizationId, ''))}*`;
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await this.redis.unlink(...keys);
    } while (cursor !== '0');
    await this.redis.publish(this.purgeChannel, organizationId);
    return deleted;
  }

  async claim(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.set(this.leaseKey(key), token, 'PX', leaseMs, 'NX')) === 'OK';
  }

  async release(key: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.leaseKey(key), token);
  }

  async poll(organizationId: string, key: string): Promise<{ value: string | undefined; claimed: boolean }> {
    const [value, lease] = await this.redis.mget(this.entryKey(organizationId, key), this.leaseKey(key));
    return { value: value ?? undefined, claimed: lease !== null && lease !== undefined };
  }

  /** Calls `listener` with each organization purged on any instance (a connection of its own, as pub/sub needs). */
  subscribePurges(listener: (organizationId: string) => void): void {
    const subscriber = (this.subscriber = this.redis.duplicate());
    // Errors reach the main connection's breaker; the subscriber reconnects and resubscribes by itself.
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, organizationId: string) => listener(organizationId));
    subscriber.subscribe(this.purgeChannel).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
  }
}
