/**
 * Checks a batch input file line by line as it streams from storage (SPEC "Batch input line"): each
 * non-blank line is a JSON object with a unique string `custom_id`, `method` POST, `url` equal to the
 * batch's endpoint and an object `body`. Valid requests are handed over in chunks while no error has
 * been seen; errors are collected with their line numbers (code `invalid_jsonl`, SPEC "Batch error
 * codes").
 */
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { findTooDeepValue, MAX_JSON_DEPTH } from '../core/json-depth.ts';
import type { BatchError, NewBatchRequest } from './batch-records.ts';

export interface BatchInputRules {
  /** The batch's endpoint; every line's `url` must equal it. */
  endpoint: string;
  /** Largest line, bytes (the synchronous request body limit). */
  maxLineBytes: number;
  /** Most requests one batch may hold. */
  maxRequests: number;
  /** Most errors reported before reading stops. */
  maxErrors?: number;
}

export interface BatchInputSummary {
  /** Requests found (valid lines). */
  total: number;
  /** Empty when the file is valid. */
  errors: BatchError[];
}

const CHUNK_SIZE = 500;

function lineError(line: number | null, param: string | null, message: string): BatchError {
  return { code: 'invalid_jsonl', message, line, param };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates `source` (the raw file bytes). `accept` receives valid requests in order, in chunks, and
 * is no longer called once an error was found (the caller discards what it stored).
 */
export async function validateBatchInput(
  source: AsyncIterable<Uint8Array | string>,
  rules: BatchInputRules,
  accept: (requests: NewBatchRequest[]) => Promise<void>,
): Promise<BatchInputSummary> {
  const maxErrors = rules.maxErrors ?? 100;
  const errors: BatchError[] = [];
  const firstLineOf = new Map<string, number>();
  let pending: NewBatchRequest[] = [];
  let total = 0;
  let lineNumber = 0;
  const input = Readable.from(source);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const rawLine of lines) {
      lineNumber++;
      const text = lineNumber === 1 ? rawLine.replace(/^\uFEFF/, '') : rawLine;
      if (text.trim() === '') continue;
      const problem = checkLine(text, lineNumber, rules, firstLineOf);
      if ('code' in problem) {
        errors.push(problem);
        if (errors.length >= maxErrors) break;
        continue;
      }
      total++;
      if (total > rules.maxRequests) {
        errors.push(
          lineError(
            null,
            null,
            `The file holds more than ${rules.maxRequests} requests, the most one batch may have. Split it into several batches.`,
          ),
        );
        break;
      }
      if (errors.length > 0) continue;
      pending.push(problem);
      if (pending.length >= CHUNK_SIZE) {
        await accept(pending);
        pending = [];
      }
    }
  } finally {
    lines.close();
    // Stopping early (too many errors) must still release the file handle behind the source.
    input.destroy();
  }
  if (errors.length === 0 && total === 0)
    errors.push(lineError(null, null, 'The input file holds no requests: it is empty or has only blank lines.'));
  if (errors.length === 0 && pending.length > 0) await accept(pending);
  return { total, errors };
}

function checkLine(text: string, line: number, rules: BatchInputRules, firstLineOf: Map<string, number>): BatchError | NewBatchRequest {
  if (Buffer.byteLength(text) > rules.maxLineBytes) {
    return lineError(line, null, `Line ${line} is larger than ${rules.maxLineBytes} bytes, the largest request this server accepts.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return lineError(line, null, `Line ${line} is not valid JSON. Each line must be one JSON object.`);
  }
  if (!isPlainObject(parsed)) return lineError(line, null, `Line ${line} must be a JSON object.`);
  const customId = parsed['custom_id'];
  if (customId === undefined) return lineError(line, 'custom_id', `Line ${line} has no custom_id.`);
  if (typeof customId !== 'string' || customId === '')
    return lineError(line, 'custom_id', `Line ${line}: custom_id must be a non-empty string.`);
  const method = parsed['method'];
  if (method === undefined) return lineError(line, 'method', `Line ${line} has no method.`);
  if (method !== 'POST') return lineError(line, 'method', `Line ${line}: method must be POST.`);
  const url = parsed['url'];
  if (url === undefined) return lineError(line, 'url', `Line ${line} has no url.`);
  if (url !== rules.endpoint) return lineError(line, 'url', `Line ${line}: url must be the batch's endpoint '${rules.endpoint}'.`);
  const body = parsed['body'];
  if (body === undefined) return lineError(line, 'body', `Line ${line} has no body.`);
  if (!isPlainObject(body)) return lineError(line, 'body', `Line ${line}: body must be a JSON object.`);
  // Checked before anything recurses over the body (JSON.stringify below): a line error, not a stack overflow.
  const tooDeep = findTooDeepValue(body, MAX_JSON_DEPTH, 'body');
  if (tooDeep !== undefined) return lineError(line, tooDeep.param, `Line ${line}: ${tooDeep.message}`);
  if (body['stream'] === true)
    return lineError(line, 'body.stream', `Line ${line}: streaming is not available in a batch; leave body.stream unset or false.`);
  const earlier = firstLineOf.get(customId);
  if (earlier !== undefined)
    return lineError(
      line,
      'custom_id',
      `Line ${line}: custom_id '${customId}' is already used on line ${earlier}; custom_id values must be unique.`,
    );
  firstLineOf.set(customId, line);
  return { line, customId, body: JSON.stringify(body) };
}
