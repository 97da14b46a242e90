/**
 * The batch in progress through the faults: `lines` chat lines on `batch-chat` (which always answers
 * 200, so any failed line was failed by an outage), created before the first fault; then its end state:
 * every custom_id exactly once across the output and error files, which lines failed and why, and the
 * request ids of the output lines (each must have exactly one ledger row).
 */
import OpenAI, { toFile } from 'openai';
import { until } from '../until.ts';

export interface BatchResult {
  status: string;
  lines: number;
  /** custom_ids missing from both files. */
  missing: string[];
  /** custom_ids found more than once. */
  duplicates: string[];
  /** Error-file lines: custom_id, status and message. */
  failed: Array<{ customId: string; status: number | undefined; message: string }>;
  /** request_id of every output line. */
  outputRequestIds: string[];
}

interface BatchLine {
  custom_id: string;
  response?: { status_code?: number; request_id?: string; body?: { error?: { message?: string } } } | null;
  error?: { message?: string } | null;
}

export async function startBatch(origin: string, key: string, lines: number): Promise<string> {
  const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 2 });
  const input = Array.from({ length: lines }, (_, index) =>
    JSON.stringify({
      custom_id: `line-${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'batch-chat', max_tokens: 16, messages: [{ role: 'user', content: `line ${index}` }] },
    }),
  ).join('\n');
  const file = await client.files.create({ file: await toFile(Buffer.from(input), 'chaos-batch.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  return batch.id;
}

/** Batch progress: lines done (completed + failed) of the total. */
export async function batchProgress(origin: string, key: string, id: string): Promise<{ status: string; done: number; total: number }> {
  const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0, timeout: 5000 });
  const batch = await client.batches.retrieve(id);
  const counts = batch.request_counts ?? { completed: 0, failed: 0, total: 0 };
  return { status: batch.status, done: counts.completed + counts.failed, total: counts.total };
}

/** Waits (up to `timeoutMs`) until the batch is in a final state, then reads and checks both files. */
export async function finishBatch(origins: string[], key: string, id: string, lines: number, timeoutMs: number): Promise<BatchResult> {
  let turn = 0;
  // Any instance may answer; one that is down only costs a turn.
  const client = (): OpenAI =>
    new OpenAI({ apiKey: key, baseURL: `${origins[turn++ % origins.length]}/v1`, maxRetries: 0, timeout: 10_000 });
  const batch = await until(
    async () => {
      const current = await client().batches.retrieve(id);
      return ['completed', 'failed', 'expired', 'cancelled'].includes(current.status) ? current : undefined;
    },
    `batch ${id} to end`,
    timeoutMs,
    500,
  );
  const read = async (fileId: string | null | undefined): Promise<BatchLine[]> =>
    fileId === null || fileId === undefined
      ? []
      : (await (await client().files.content(fileId)).text())
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as BatchLine);
  const output = await read(batch.output_file_id);
  const errors = await read(batch.error_file_id);
  const seen = new Map<string, number>();
  for (const line of [...output, ...errors]) seen.set(line.custom_id, (seen.get(line.custom_id) ?? 0) + 1);
  return {
    status: batch.status,
    lines,
    missing: Array.from({ length: lines }, (_, index) => `line-${index}`).filter((customId) => !seen.has(customId)),
    duplicates: [...seen].filter(([, count]) => count > 1).map(([customId]) => customId),
    failed: errors.map((line) => ({
      customId: line.custom_id,
      status: line.response?.status_code,
      message: line.response?.body?.error?.message ?? line.error?.message ?? '',
    })),
    outputRequestIds: output.map((line) => line.response?.request_id ?? ''),
  };
}
