/**
 * Retention of the dashboard's bookkeeping: a timer on every instance deletes sign-in attempts, audit
 * entries, long-expired sessions and closed invitations past their age, in bounded batches (so one run never holds a long
 * lock or a long transaction, and instances pruning at once only share the work). Defaults: attempts
 * 7 days (the throttle needs 15 minutes), audit entries 365 days, sessions 30 days past their absolute
 * expiry (a session opened within the known-device window, 30 days, marks its address as known),
 * invitations 30 days after they were accepted, revoked or voided (pending ones stay: they can be sent again).
 */
import type { Logger } from 'pino';
import type { OwnersRepository } from '../db/repositories/owners-repository.ts';

const DAY = 86_400_000;

export interface AccountsRetentionOptions {
  /** Sign-in attempts older than this are deleted, milliseconds; default 7 days. */
  signInAttemptsMs: number;
  /** Audit entries older than this are deleted, milliseconds; default 365 days. */
  auditMs: number;
  /** Sessions whose absolute expiry is older than this are deleted, milliseconds; default 30 days. */
  expiredSessionsMs: number;
  /** Invitations accepted, revoked or voided longer ago than this are deleted, milliseconds; default 30 days. */
  closedInvitationsMs: number;
  /** How often the timer runs, milliseconds; default 1 hour. */
  intervalMs: number;
  /** Rows one delete statement removes at most; default 1,000. */
  batchSize: number;
  /** Statements per table and run at most (the rest waits for the next run); default 50. */
  maxBatchesPerRun: number;
  now: () => number;
}

export const DEFAULT_ACCOUNTS_RETENTION: AccountsRetentionOptions = Object.freeze({
  signInAttemptsMs: 7 * DAY,
  auditMs: 365 * DAY,
  expiredSessionsMs: 30 * DAY,
  closedInvitationsMs: 30 * DAY,
  intervalMs: 3_600_000,
  batchSize: 1_000,
  maxBatchesPerRun: 50,
  now: Date.now,
});

export interface PruneResult {
  signInAttempts: number;
  auditEntries: number;
  sessions: number;
  invitations: number;
}

export class AccountsRetention {
  private readonly options: AccountsRetentionOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PruneResult> | undefined;

  constructor(
    private readonly repository: OwnersRepository,
    private readonly logger: Logger,
    options: Partial<AccountsRetentionOptions> = {},
  ) {
    this.options = { ...DEFAULT_ACCOUNTS_RETENTION, ...options };
  }

  start(): void {
    this.timer = setInterval(() => {
      this.pruneOnce().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'dashboard retention: pruning failed; the next run retries'),
      );
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass over the four tables (a run already in progress is joined, not doubled). */
  pruneOnce(): Promise<PruneResult> {
    this.running ??= this.prune().finally(() => (this.running = undefined));
    return this.running;
  }

  private async prune(): Promise<PruneResult> {
    const now = this.options.now();
    const result: PruneResult = {
      signInAttempts: await this.inBatches((size) => this.repository.attempts.deleteOlderThan(now - this.options.signInAttemptsMs, size)),
      auditEntries: await this.inBatches((size) => this.repository.deleteAuditOlderThan(now - this.options.auditMs, size)),
      sessions: await this.inBatches((size) => this.repository.deleteSessionsExpiredBefore(now - this.options.expiredSessionsMs, size)),
      invitations: await this.inBatches((size) =>
        this.repository.invitations.deleteClosedBefore(now - this.options.closedInvitationsMs, size),
      ),
    };
    if (result.signInAttempts + result.auditEntries + result.sessions + result.invitations > 0)
      this.logger.info(result, 'dashboard retention: old rows deleted');
    return result;
  }

  private async inBatches(deleteBatch: (size: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < this.options.maxBatchesPerRun; batch++) {
      const deleted = await deleteBatch(this.options.batchSize);
      total += deleted;
      if (deleted < this.options.batchSize) break;
    }
    return total;
  }
}
