/**
 * The store behind `limitsBackend: off`: admits everything and counts nothing, for deployments that do
 * not enforce limits (and as the "limits off" baseline of the gateway benchmark). Usage figures read as
 * zero with the tier's limits; the usage ledger (cost accounting) is unaffected.
 */
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
import { buildSnapshot } from '../limit-decision.ts';
import type { AdmitCheck, AdmitResult, LimitPolicy, LimitSnapshot, LimitStore, LimitStoreOptions, SettleResult } from '../limit-store.ts';
import { windowsAt } from '../limit-windows.ts';

const NOTHING_COUNTED = { requests: 0, minuteTokens: 0, dayTokens: 0, monthTokens: 0 };

export class DisabledLimitStore implements LimitStore {
  private readonly clock: Clock;
  private readonly prefix = randomBytes(6).toString('hex');
  private counter = 0;

  constructor(options: LimitStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  private snapshot(policy: LimitPolicy, nowMs: number): LimitSnapshot {
    return buildSnapshot(policy, NOTHING_COUNTED, windowsAt(nowMs), nowMs);
  }

  async admit(check: AdmitCheck): Promise<AdmitResult> {
    const nowMs = this.clock.now();
    return {
      admitted: true,
      reservation: {
        id: `${this.prefix}-${++this.counter}`,
        subject: check.subject,
        policy: check.policy,
        estimatedTokens: check.estimatedTokens,
        admittedAtMs: nowMs,
      },
      figures: this.snapshot(check.policy, nowMs),
    };
  }

  async settle(reservation: Parameters<LimitStore['settle']>[0]): Promise<SettleResult> {
    return { settled: true, figures: this.snapshot(reservation.policy, this.clock.now()) };
  }

  async usage(_subject: Parameters<LimitStore['usage']>[0], policy: LimitPolicy): Promise<LimitSnapshot> {
    return this.snapshot(policy, this.clock.now());
  }

  async close(): Promise<void> {}
}
