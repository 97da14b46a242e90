/**
 * The usage ledger's journal: where records go when the database has been away long enough that
 * memory should not hold them (`dependencies.ledgerMemoryRecords`), and at shutdown when they still
 * cannot be written. One append-only JSON-lines file per process under `<dataDir>/ledger-journal/`.
 *
 * Ownership is safe across containers sharing the directory (process ids are per PID namespace, so
 * they say nothing about another container's process): each journal has an owner token, `<instance
 * id>~<random>`, in its file names (`<start ms>-<token>.jsonl`), and a lease, the file `<token>.lease`,
 * written before its first record and touched every third of `leaseMs` while the process lives. A
 * stopping process removes its lease (`release`, called by the ledger's `close`).
 *
 * Replay reads this journal's own files and those whose owner's lease is gone or older than `leaseMs`
 * (a stopped or crashed instance, whatever its container). A file is taken by renaming it to
 * `<name>.replay.<token>` first: rename is atomic, so exactly one process takes it, and records
 * appended meanwhile by a live owner go to a new file. A taken file is the taker's under its lease (a
 * taker that dies half-way leaves it to the next one). Records are written through the ledger's sink,
 * and each file is deleted once they are committed; the sink ignores a request id it already holds
 * (`usage_ledger.request_id` is unique), so a replay cut short and run again writes each record once.
 * Files of the earlier naming (`<start ms>-<pid>.jsonl`) are taken once untouched for `leaseMs`.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomAlphanumeric } from '../core/ids.ts';
import type { LedgerJournal, LedgerRecord } from '../services/metering/usage-ledger.ts';

/** `<start ms>-<owner token>.jsonl`, optionally `.replay.<taker token>`. */
const FILE_PATTERN = /^(\d+)-([A-Za-z0-9._~-]+?)\.jsonl(?:\.replay\.([A-Za-z0-9._~-]+))?$/;
/** The earlier naming, `<start ms>-<pid>.jsonl` (`.replay`): no lease, taken once untouched for `leaseMs`. */
const LEGACY_PATTERN = /^\d+-\d+\.jsonl(\.replay)?$/;
const LEASE_SUFFIX = '.lease';

export interface FileLedgerJournalOptions {
  /** This instance's id (INSTANCE_ID, or the one kept in the data directory); part of the owner token. */
  instanceId?: string;
  /** A lease not touched for this long belongs to a process that is gone, milliseconds. Default 30,000. */
  leaseMs?: number;
}

export class FileLedgerJournal implements LedgerJournal {
  /** `<instance id>~<random>`: unique per journal even when containers share an instance id. */
  readonly ownerToken: string;
  private readonly ownFile: string;
  private readonly leaseMs: number;
  private renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly directory: string,
    options: FileLedgerJournalOptions = {},
  ) {
    const instance = (options.instanceId ?? 'instance').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);
    this.ownerToken = `${instance}~${randomAlphanumeric(10)}`;
    this.ownFile = `${Date.now()}-${this.ownerToken}.jsonl`;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  append(records: readonly LedgerRecord[]): void {
    if (records.length === 0) return;
    mkdirSync(this.directory, { recursive: true });
    this.hold();
    let text = '';
    for (const record of records) text += `${JSON.stringify(record)}\n`;
    appendFileSync(join(this.directory, this.ownFile), text);
  }

  /** True while journal files of any owner are present (files of a live owner become replayable when it goes). */
  hasRecords(): boolean {
    return this.names().some((name) => FILE_PATTERN.test(name) || LEGACY_PATTERN.test(name));
  }

  async replay(write: (records: readonly LedgerRecord[]) => Promise<void>, batchSize: number): Promise<number> {
    let written = 0;
    const names = this.names();
    const liveOwners = new Set(
      names.filter((name) => name.endsWith(LEASE_SUFFIX) && this.leaseIsLive(name)).map((name) => name.slice(0, -LEASE_SUFFIX.length)),
    );
    for (const name of names.sort()) {
      const path = this.take(name, liveOwners);
      if (path === undefined) continue;
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      const records: LedgerRecord[] = [];
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        try {
          records.push(JSON.parse(line) as LedgerRecord);
        } catch {
          // A line cut by a crash mid-append: the rest of the file is still good.
        }
      }
      for (let start = 0; start < records.length; start += batchSize) {
        await write(records.slice(start, start + batchSize));
      }
      written += records.length;
      rmSync(path, { force: true });
    }
    this.forgetDeadLeases(liveOwners);
    return written;
  }

  /** Gives up this journal's lease (the process stops): its files, if any are left, are for the next start or any other instance to replay. */
  release(): void {
    if (this.renewal !== undefined) clearInterval(this.renewal);
    this.renewal = undefined;
    rmSync(join(this.directory, this.ownerToken + LEASE_SUFFIX), { force: true });
  }

  private names(): string[] {
    try {
      return readdirSync(this.directory);
    } catch {
      return [];
    }
  }

  /** Writes (or touches) this journal's lease and keeps touching it while the process lives. */
  private hold(): void {
    const path = join(this.directory, this.ownerToken + LEASE_SUFFIX);
    if (this.renewal === undefined) {
      writeFileSync(path, `${JSON.stringify({ host: hostname(), pid: process.pid, since: new Date().toISOString() })}\n`);
      this.renewal = setInterval(() => this.touch(path), Math.max(10, Math.floor(this.leaseMs / 3)));
      this.renewal.unref();
    } else {
      this.touch(path);
    }
  }

  private touch(path: string): void {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // Removed (by hand, or taken as dead after a stall): write it again.
      try {
        writeFileSync(path, `${JSON.stringify({ host: hostname(), pid: process.pid, since: new Date().toISOString() })}\n`);
      } catch {
        // The disk is full or read-only: the journal cannot be written either; the ledger says so.
      }
    }
  }

  private leaseIsLive(leaseName: string): boolean {
    try {
      return Date.now() - statSync(join(this.directory, leaseName)).mtimeMs < this.leaseMs;
    } catch {
      return false;
    }
  }

  /**
   * Takes one file for replay, returning its path, or undefined when it is not this journal's to
   * replay (its owner or taker lives) or another process took it first.
   */
  private take(name: string, liveOwners: ReadonlySet<string>): string | undefined {
    const path = join(this.directory, name);
    if (LEGACY_PATTERN.test(name)) {
      try {
        if (Date.now() - statSync(path).mtimeMs < this.leaseMs) return undefined;
      } catch {
        return undefined;
      }
      return this.rename(name);
    }
    const match = FILE_PATTERN.exec(name);
    if (match === null) return undefined;
    const holder = match[3] ?? match[2]!;
    if (holder === this.ownerToken) return match[3] === undefined ? this.rename(name) : path;
    if (liveOwners.has(holder)) return undefined;
    return this.rename(name);
  }

  /** Renames `<base>.jsonl[.replay[.<token>]]` to `<base>.jsonl.replay.<own token>`; undefined when another process took it first. */
  private rename(name: string): string | undefined {
    this.hold();
    const base = name.replace(/\.replay(\.[A-Za-z0-9._~-]+)?$/, '');
    const target = join(this.directory, `${base}.replay.${this.ownerToken}`);
    try {
      renameSync(join(this.directory, name), target);
      return target;
    } catch {
      return undefined;
    }
  }

  /** Removes the leases of owners that are gone and have no file left. */
  private forgetDeadLeases(liveOwners: ReadonlySet<string>): void {
    const names = this.names();
    for (const name of names) {
      if (!name.endsWith(LEASE_SUFFIX)) continue;
      const owner = name.slice(0, -LEASE_SUFFIX.length);
      if (owner === this.ownerToken || liveOwners.has(owner)) continue;
      if (names.some((other) => other !== name && other.includes(owner))) continue;
      rmSync(join(this.directory, name), { force: true });
    }
  }
}
