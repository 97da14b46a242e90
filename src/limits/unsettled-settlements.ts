/**
 * Settlements the shared store did not take, kept and tried again until they land.
 *
 * A settle that cannot reach Redis (a silence, a refused connection, the breaker open) would otherwise
 * leave its reservation charged at the estimate and the real cost out of the budget's settled spend:
 * the shared figures would undercount money until the period ends. Settling is exactly once on the
 * store's side (the settle script deletes the reservation record; only the call that finds it adjusts),
 * so trying again is safe even when the first try did reach Redis and only its answer was lost.
 *
 * Kept per process, in memory, each until its reservation record has expired on the store (after that a
 * settle is a no-op), at most `maxEntries` (the oldest dropped, counted). Tried again every
 * `retryIntervalMs` while the store is reachable, and once more at close. A process that ends with
 * settlements still kept leaves those reservations charged at their estimate (never less than the
 * real cost for output, the side that holds money back) until their windows end.
 */
import { isUnreachableError } from '../core/circuit-breaker.ts';
import type { Reservation } from './limit-store.ts';

export interface UnsettledSettlement {
  readonly reservation: Reservation;
  readonly actualTokens: number;
  readonly actualCostMicroUsd: number | undefined;
}

export interface UnsettledSettlementsOptions {
  /** Settles on the shared store; throws when it cannot be reached. */
  settle(entry: UnsettledSettlement): Promise<unknown>;
  /** Whether the shared store is worth trying now (its breaker closed). */
  reachable(): boolean;
  clock: { now(): number };
  /** How long the store keeps a reservation record, ms: a settlement older than that is dropped. */
  reservationTtlMs: number;
  /** Default 100,000. */
  maxEntries?: number;
  /** Default 500 ms. */
  retryIntervalMs?: number;
  /** Settlements tried at once (pipelined on one connection). Default 64. */
  concurrency?: number;
}

export class UnsettledSettlements {
  private readonly entries = new Map<string, UnsettledSettlement>();
  private timer: NodeJS.Timeout | undefined;
  private retrying: Promise<void> | undefined;
  private readonly maxEntries: number;
  private readonly retryIntervalMs: number;
  private readonly concurrency: number;
  /** Settlements that landed on a later try (metrics, tests). */
  landed = 0;
  /** Settlements given up: their reservation expired first, or too many were kept. */
  dropped = 0;

  constructor(private readonly options: UnsettledSettlementsOptions) {
    this.maxEntries = options.maxEntries ?? 100_000;
    this.retryIntervalMs = options.retryIntervalMs ?? 500;
    this.concurrency = options.concurrency ?? 64;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keeps a settlement the store did not take (the same reservation twice: the last one counts). */
  keep(entry: UnsettledSettlement): void {
    this.entries.delete(entry.reservation.id);
    this.entries.set(entry.reservation.id, entry);
    if (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
      this.dropped++;
    }
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.retry(), this.retryIntervalMs);
      this.timer.unref();
    }
  }

  /** Tries every kept settlement once (single flight); those the store still cannot take stay kept. */
  retry(): Promise<void> {
    if (this.entries.size === 0 || !this.options.reachable()) return this.retrying ?? Promise.resolve();
    this.retrying ??= this.retryAll().finally(() => {
      this.retrying = undefined;
      if (this.entries.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    });
    return this.retrying;
  }

  /** Stops the timer after one last try. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.retry();
  }

  private async retryAll(): Promise<void> {
    const nowMs = this.options.clock.now();
    const batch: UnsettledSettlement[] = [];
    for (const entry of this.entries.values()) {
      if (entry.reservation.admittedAtMs + this.options.reservationTtlMs <= nowMs) {
        this.entries.delete(entry.reservation.id);
        this.dropped++;
        continue;
      }
      batch.push(entry);
    }
    for (let start = 0; start < batch.length; start += this.concurrency) {
      let unreachable = false;
      await Promise.all(
        batch.slice(start, start + this.concurrency).map(async (entry) => {
          try {
            await this.options.settle(entry);
            this.landed++;
            this.entries.delete(entry.reservation.id);
          } catch (error) {
            // Away again: kept for the next try. Any other answer would repeat forever: dropped.
            if (isUnreachableError(error)) unreachable = true;
            else if (this.entries.delete(entry.reservation.id)) this.dropped++;
          }
        }),
      );
      if (unreachable) return;
    }
  }
}
