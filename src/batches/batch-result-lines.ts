/**
 * Finished batch lines -> lines of the output and error files. Follows SPEC "Batch output line" and
 * "Batch error line" with the OpenAI layout (docs/wire-contracts.md "Files and batches"):
 * success `{id:"batch_req_…", custom_id, response:{status_code, request_id, body}, error:null}`,
 * failure `{id, custom_id, response:{…} or null when the request never ran, error:{code, message}}`.
 */
import { newId } from '../core/ids.ts';
import type { BatchRequestRow } from './batch-records.ts';

export interface BatchResultLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string | null; body: unknown } | null;
  error: { code: string; message: string } | null;
}

/** The route's body as JSON when it is JSON, else the text itself. */
function parseBody(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function responseOf(row: BatchRequestRow): BatchResultLine['response'] {
  return row.statusCode === null ? null : { status_code: row.statusCode, request_id: row.requestId, body: parseBody(row.responseBody) };
}

export function toOutputLine(row: BatchRequestRow): BatchResultLine {
  return { id: row.resultId ?? newId.batchRequest(), custom_id: row.customId, response: responseOf(row), error: null };
}

export function toErrorLine(row: BatchRequestRow): BatchResultLine {
  return {
    id: row.resultId ?? newId.batchRequest(),
    custom_id: row.customId,
    response: responseOf(row),
    error: { code: row.errorCode ?? 'invalid_request', message: row.errorMessage ?? 'The request failed.' },
  };
}
