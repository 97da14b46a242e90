/**
 * The response cache on `/metrics`: lookups by endpoint and outcome (hits, misses, bypasses), bytes
 * stored, and the bytes the in-process tier holds now.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CacheObserver, CacheStatus } from './generation-cache.ts';

export class CacheMetrics implements CacheObserver {
  private readonly lookups: Counter<'endpoint' | 'status'>;
  private readonly storedBytes: Counter;
  private readonly storedEntries: Counter;

  constructor(registry: Registry, memoryBytes: () => number) {
    this.lookups = new Counter({
      name: 'switchyard_response_cache_requests_total',
      help: 'Requests the response cache decided on, by endpoint and status (hit, miss, bypass).',
      labelNames: ['endpoint', 'status'],
      registers: [registry],
    });
    this.storedBytes = new Counter({
      name: 'switchyard_response_cache_stored_bytes_total',
      help: 'Bytes of answers stored in the response cache (stored JSON).',
      registers: [registry],
    });
    this.storedEntries = new Counter({
      name: 'switchyard_response_cache_stored_entries_total',
      help: 'Answers stored in the response cache.',
      registers: [registry],
    });
    new Gauge({
      name: 'switchyard_response_cache_memory_bytes',
      help: "Bytes held by this instance's in-process response cache tier.",
      registers: [registry],
      collect() {
        this.set(memoryBytes());
      },
    });
  }

  lookedUp(endpoint: string, status: CacheStatus): void {
    this.lookups.inc({ endpoint, status });
  }

  stored(bytes: number): void {
    this.storedBytes.inc(bytes);
    this.storedEntries.inc();
  }
}
