/**
 * The usage ledger's journal: where records go when the database has been away long enough that
 * memory should not hold them (`dependencies.ledgerMemoryRecords`), and at shutdown when they still
 * cannot be written. One append-only JSON-lines file per process under `<dataDir>/ledger-journal/`
 * (`<start ms>-<pid>.jsonl`), so processes never write to each other's files.
 *
 * Replay reads this process's files and those of processes that are no longer running (a crashed or
 * stopped instance that shared the directory), writes them through the ledger's sink, and deletes
 * each file once its records are committed. The sink ignores a request id it already holds
 * (`usage_ledger.request_id` is unique), so a replay cut short by a crash and run again writes each
 * record exactly once.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerJournal, LedgerRecord } from '../services/metering/usage-ledger.ts';

const FILE_PATTERN = /^(\d+)-(\d+)\.jsonl(\.replay)?$/;
/** A file being replayed is renamed first, so that records appended meanwhile go to a new file. */
const REPLAY_SUFFIX = '.replay';

function processIsRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class FileLedgerJournal implements LedgerJournal {
  private readonly ownFile: string;

  constructor(private readonly directory: string) {
    this.ownFile = `${Date.now()}-${process.pid}.jsonl`;
  }

  append(records: readonly LedgerRecord[]): void {
    if (records.length === 0) return;
    mkdirSync(this.directory, { recursive: true });
    let text = '';
    for (const record of records) text += `${JSON.stringify(record)}\n`;
    appendFileSync(join(this.directory, this.ownFile), text);
  }

  /** Journal files this process may replay: its own, and those of processes no longer running. */
  private replayable(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.directory);
    } catch {
      return [];
    }
    return names
      .filter((name) => {
        const match = FILE_PATTERN.exec(name);
        if (match === null) return false;
        const pid = Number(match[2]);
        return name === this.ownFile || pid === process.pid || !processIsRunning(pid);
      })
      .sort();
  }

  hasRecords(): boolean {
    return this.replayable().length > 0;
  }

  async replay(write: (records: readonly LedgerRecord[]) => Promise<void>, batchSize: number): Promise<number> {
    let written = 0;
    for (const name of this.replayable()) {
      let path = join(this.directory, name);
      let text: string;
      try {
        if (!name.endsWith(REPLAY_SUFFIX)) {
          renameSync(path, path + REPLAY_SUFFIX);
          path += REPLAY_SUFFIX;
        }
        text = readFileSync(path, 'utf8');
      } catch {
        // Another process took it first.
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
    return written;
  }
}
