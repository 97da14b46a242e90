/**
 * The usage ledger buffer: one record per metered request, kept in memory and written to the
 * database in batches, so the hot path never waits for a database round trip.
 *
 * Writes happen every `flushIntervalMs`, as soon as `maxBatchRecords` are waiting, on `flush()`, and
 * on `close()` (graceful shutdown writes everything). A failed write keeps its records at the front of
 * the buffer, logs the failure and is retried on the next tick; nothing is dropped. If records still
 * cannot be written at shutdown, each one is logged in full (so it can be replayed) and `close()`
 * rejects.
 *
 * While the database is away, records stay in memory up to `memoryRecords`; past that the oldest go
 * to the journal (an append-only file under the data directory, db/ledger-journal.ts), and so does
 * whatever is still unwritten at shutdown. When the database answers again the journal is replayed.
 * The sink ignores a request id it already holds, so a retried or replayed write never adds a second
 * row. The outage is logged once when it starts and once when it ends (with the counts), not per tick.
 *
 * When the journal cannot be written either (a full disk), memory still holds at most
 * `memoryLimitRecords` (default twice `memoryRecords`): past that the oldest records are dropped and
 * counted. Each state change is one log line, never one per request: the journal failing, the journal
 * writable again, the first record dropped, and the end of the outage (with the counts journaled and
 * dropped). The journal is tried again once per tick, not on every record.
 *
 * What a crash (SIGKILL, power loss) can lose at most: every record not yet committed by the sink or
 * the journal. With a healthy database that is the requests finished during the last flush interval
 * (default 1 s) or the last `maxBatchRecords` of them (default 500) if they came faster, plus the
 * batch being written at that moment. While the database is away, up to `memoryRecords` more.
 */
import type { LedgerRecord } from './ledger-record.ts';

export { createLedgerRecord, type CacheHitCharge, type LedgerRecord, type LedgerRecordInit } from './ledger-record.ts';

/** Where records are written; the database layer implements it (one transaction per call). */
export interface LedgerSink {
  /** Inserts the records; a record whose request id is already stored is skipped, not duplicated. */
  insertMany(records: readonly LedgerRecord[]): Promise<void>;
}

/** Where records wait on local disk while the database is away (db/ledger-journal.ts). */
export interface LedgerJournal {
  append(records: readonly LedgerRecord[]): void;
  hasRecords(): boolean;
  /** Writes every journaled record through `write` in batches, removing what was written; returns the count. */
  replay(write: (records: readonly LedgerRecord[]) => Promise<void>, batchSize: number): Promise<number>;
  /** The process stops: what it journaled may be replayed by the next start or another instance at once. */
  release?(): void;
}

/** The part of a pino logger the ledger uses. */
export interface LedgerLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface UsageLedgerOptions {
  sink: LedgerSink;
  /** Milliseconds between timed writes; default 1,000. */
  flushIntervalMs?: number;
  /** Records per `insertMany` call; a write starts as soon as this many wait. Default 500. */
  maxBatchRecords?: number;
  /** Write attempts at `close()` before giving up and logging the records; default 3. */
  closeAttempts?: number;
  /** Milliseconds before the second attempt at `close()`, doubled after each failure; default 200. */
  closeRetryDelayMs?: number;
  /** Default: JSON lines on stderr. */
  logger?: LedgerLogger;
  /** Records kept in memory while writes fail; older ones go to `journal`. Default 10,000. */
  memoryRecords?: number;
  /** Without one, records wait in memory only (and are logged in full if still unwritten at shutdown). */
  journal?: LedgerJournal;
  /**
   * The most records memory holds when neither the database nor the journal takes them; past it the
   * oldest are dropped (and counted). Default twice `memoryRecords`.
   */
  memoryLimitRecords?: number;
}

const stderrLogger: LedgerLogger = {
  warn: (details, message) => console.warn(JSON.stringify({ level: 'warn', message, ...details })),
  error: (details, message) => console.error(JSON.stringify({ level: 'error', message, ...details })),
  info: (details, message) => console.log(JSON.stringify({ level: 'info', message, ...details })),
};

export class UsageLedger {
  private buffer: LedgerRecord[] = [];
  private readonly sink: LedgerSink;
  private readonly maxBatchRecords: number;
  private readonly closeAttempts: number;
  private readonly closeRetryDelayMs: number;
  private readonly logger: LedgerLogger;
  private readonly timer: NodeJS.Timeout;
  /** The last write in the chain; writes never overlap, so records reach the sink in order. */
  private tail: Promise<unknown> = Promise.resolve();
  private writing = false;
  /** Set by a failed write: size-triggered writes wait for the next tick instead of hammering a failing database. */
  private backingOff = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly memoryRecords: number;
  private readonly journal: LedgerJournal | undefined;
  /** Set while writes fail (between the outage's first and last log line). */
  private failingSinceMs: number | undefined;
  /** Records sent to the journal during the current outage. */
  private journaledDuringOutage = 0;
  /** A journal left by an earlier run (or this one) waits to be replayed. */
  private journalPending: boolean;
  private readonly memoryLimitRecords: number;
  /** Set while the journal cannot be written: it is tried again once per tick, not on every record. */
  private journalFailing = false;
  /** Records dropped at the memory bound during the current outage. */
  private droppedDuringOutage = 0;
  /** Records dropped at the memory bound since start (never stored anywhere). */
  droppedTotal = 0;

  constructor(options: UsageLedgerOptions) {
    this.sink = options.sink;
    this.maxBatchRecords = options.maxBatchRecords ?? 500;
    this.closeAttempts = options.closeAttempts ?? 3;
    this.closeRetryDelayMs = options.closeRetryDelayMs ?? 200;
    this.logger = options.logger ?? stderrLogger;
    this.memoryRecords = options.memoryRecords ?? 10_000;
    this.journal = options.journal;
    this.memoryLimitRecords = Math.max(this.memoryRecords, options.memoryLimitRecords ?? 2 * this.memoryRecords);
    this.journalPending = this.journal?.hasRecords() ?? false;
    this.timer = setInterval(() => {
      this.backingOff = false;
      if ((this.buffer.length > 0 || this.journalPending) && !this.writing) void this.flush();
    }, options.flushIntervalMs ?? 1000);
    // The ledger must not keep a process alive on its own; shutdown calls close().
    this.timer.unref();
  }

  /** Records waiting to be written (a failed write puts its records back here). */
  get pendingRecords(): number {
    return this.buffer.length;
  }

  /** Buffers one record; returns at once. After `close()` the record is logged in full instead. */
  record(record: LedgerRecord): void {
    if (this.closed) {
      this.logger.error({ record }, 'usage ledger: record arrived after shutdown; logged here instead of stored');
      return;
    }
    this.buffer.push(record);
    if (this.failingSinceMs !== undefined) this.spillOverflow(false);
    else if (this.buffer.length >= this.maxBatchRecords && !this.writing && !this.backingOff) void this.flush();
  }

  /**
   * Moves the oldest records past `memoryRecords` to the journal (only while writes fail); a journal
   * known to fail is tried again only when `retryJournal` (once per tick). Then holds the memory bound.
   */
  private spillOverflow(retryJournal: boolean): void {
    if (this.buffer.length <= this.memoryRecords) return;
    if (this.journal !== undefined && (!this.journalFailing || retryJournal)) {
      const spilled = this.buffer.splice(0, this.buffer.length - this.memoryRecords);
      try {
        this.journal.append(spilled);
        this.journaledDuringOutage += spilled.length;
        this.journalPending = true;
        if (this.journalFailing) {
          this.journalFailing = false;
          this.logger.info({ records: spilled.length }, 'usage ledger: the journal can be written again');
        }
      } catch (error) {
        this.buffer = spilled.concat(this.buffer);
        if (!this.journalFailing) {
          this.journalFailing = true;
          this.logger.error(
            { err: error, memoryLimitRecords: this.memoryLimitRecords },
            'usage ledger: the journal cannot be written (disk full?); records stay in memory up to the bound, tried again every tick',
          );
        }
      }
    }
    if (this.buffer.length > this.memoryLimitRecords) {
      const dropped = this.buffer.splice(0, this.buffer.length - this.memoryLimitRecords).length;
      if (this.droppedDuringOutage === 0) {
        this.logger.error(
          { memoryLimitRecords: this.memoryLimitRecords },
          'usage ledger: neither the database nor the journal takes records and memory holds its bound: the oldest records are dropped (counted, reported when writes succeed again)',
        );
      }
      this.droppedDuringOutage += dropped;
      this.droppedTotal += dropped;
    }
  }

  /**
   * Writes every buffered record, in batches of `maxBatchRecords`, after any write already running.
   * Never rejects: on failure the records stay buffered, the failure is logged, and the number of
   * records written by this call is returned.
   */
  flush(): Promise<number> {
    const run = this.tail.then(() => this.drain());
    this.tail = run;
    return run;
  }

  /**
   * Stops the timer and writes everything, retrying a failing sink `closeAttempts` times. If records
   * remain, logs each one in full and rejects. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(() => this.journal?.release?.());
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    let delayMs = this.closeRetryDelayMs;
    for (let attempt = 1; attempt <= this.closeAttempts; attempt++) {
      await this.flush();
      if (this.buffer.length === 0) return;
      if (attempt < this.closeAttempts) {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs *= 2;
      }
    }
    const unwritten = this.buffer;
    this.buffer = [];
    if (this.journal !== undefined) {
      try {
        this.journal.append(unwritten);
        this.logger.warn(
          { records: unwritten.length },
          'usage ledger: the database is unavailable at shutdown; records kept in the journal, written at the next start',
        );
        return;
      } catch (error) {
        this.logger.error({ err: error }, 'usage ledger: the journal could not be written at shutdown');
      }
    }
    for (const record of unwritten) {
      this.logger.error({ record }, 'usage ledger: record could not be written at shutdown; logged here in full for replay');
    }
    throw new Error(`Usage ledger: ${unwritten.length} records could not be written at shutdown; each was logged in full.`);
  }

  private async drain(): Promise<number> {
    this.writing = true;
    let written = 0;
    try {
      while (this.buffer.length > 0) {
        const batch = this.buffer.splice(0, this.maxBatchRecords);
        try {
          await this.sink.insertMany(batch);
          written += batch.length;
        } catch (error) {
          // Back to the front, in order: the next tick retries them first.
          this.buffer = batch.concat(this.buffer);
          this.writeFailed(error);
          return written;
        }
      }
      if (this.journalPending && this.journal !== undefined) {
        try {
          const replayed = await this.journal.replay((records) => this.sink.insertMany(records), this.maxBatchRecords);
          // Files of another live instance sharing the directory stay until it stops or its lease lapses.
          this.journalPending = this.journal.hasRecords();
          written += replayed;
          if (replayed > 0 && this.failingSinceMs === undefined) {
            this.logger.info({ records: replayed }, 'usage ledger: records kept in the journal were written');
          }
        } catch (error) {
          this.writeFailed(error);
          return written;
        }
      }
      if (this.failingSinceMs !== undefined) {
        const details = {
          downForMs: Date.now() - this.failingSinceMs,
          written,
          journaled: this.journaledDuringOutage,
          dropped: this.droppedDuringOutage,
        };
        if (this.droppedDuringOutage === 0) {
          this.logger.info(details, 'usage ledger: writes succeed again; every record kept meanwhile is written');
        } else {
          this.logger.error(
            details,
            `usage ledger: writes succeed again; ${this.droppedDuringOutage} records were dropped at the memory bound`,
          );
        }
        this.failingSinceMs = undefined;
        this.journaledDuringOutage = 0;
        this.droppedDuringOutage = 0;
      }
    } finally {
      this.writing = false;
    }
    return written;
  }

  /** One log line when writes start failing; afterwards the records wait quietly (and spill to the journal). */
  private writeFailed(error: unknown): void {
    this.backingOff = true;
    if (this.failingSinceMs === undefined) {
      this.failingSinceMs = Date.now();
      this.logger.error(
        { err: error, pendingRecords: this.buffer.length },
        'usage ledger: writing records failed; they are kept (in memory, then in the journal) and retried every tick',
      );
    }
    this.spillOverflow(true);
  }
}
