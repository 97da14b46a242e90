/**
 * A batch's result files: the output file (lines `completed`) and the error file (lines `failed`),
 * each written by paging the finished lines out of the database into file storage (SPEC "Batch
 * output line", "Batch error line"; batch-result-lines.ts), and left out when it would be empty.
 * Recording them with the batch's final status is the caller's (batch-steps.ts `finalize`).
 */
import type { FileRecord } from '../services/files/file-record.ts';
import type { BatchLineStore } from './batch-store.ts';
import type { Clock } from '../limits/clock.ts';
import { BATCH_FILE_LIFETIME_MS, type FileService } from '../services/files/file-service.ts';
import type { BatchRecord } from './batch-records.ts';
import { toErrorLine, toOutputLine } from './batch-result-lines.ts';

/** Finished lines read from the database per page. */
const RESULT_PAGE = 500;

export class ResultFiles {
  constructor(
    private readonly lines: BatchLineStore,
    private readonly files: FileService,
    private readonly clock: Clock,
  ) {}

  /**
   * One result file (`completed` lines -> output file, `failed` -> error file); undefined when empty.
   * An empty one never touches the store (a batch with nothing to write is not held up by it).
   */
  async write(batch: BatchRecord, state: 'completed' | 'failed'): Promise<FileRecord | undefined> {
    const rows = this.lines;
    const first = await rows.finishedRequests(batch.id, state, 0, RESULT_PAGE);
    if (first.length === 0) return undefined;
    async function* content(): AsyncGenerator<string> {
      let page = first;
      while (page.length > 0) {
        yield page.map((row) => `${JSON.stringify(state === 'completed' ? toOutputLine(row) : toErrorLine(row))}\n`).join('');
        page = await rows.finishedRequests(batch.id, state, page[page.length - 1]!.line, RESULT_PAGE);
      }
    }
    const stored = await this.files.storeBytes(content());
    const now = this.clock.now();
    return {
      id: stored.id,
      organizationId: batch.organizationId,
      purpose: 'batch_output',
      filename: `${batch.id}_${state === 'completed' ? 'output' : 'error'}.jsonl`,
      bytes: stored.bytes,
      mediaType: 'application/jsonl',
      createdAt: now,
      expiresAt: now + BATCH_FILE_LIFETIME_MS,
      deletedAt: null,
      purgedAt: null,
    };
  }

  /** Removes the bytes of files written but not recorded. */
  async discard(files: readonly FileRecord[]): Promise<void> {
    for (const file of files) await this.files.discardBytes(file.id);
  }
}
