/** Canonical finish reason -> response status, incomplete details and error (docs/spec.md "Response status"). */
import type { FinishReason } from '../../core/generation.ts';
import type { IncompleteDetails, ResponseErrorObject, ResponseStatus } from './wire-types.ts';

export interface ResponseEnding {
  status: Extract<ResponseStatus, 'completed' | 'incomplete' | 'failed'>;
  incompleteDetails: IncompleteDetails | null;
  error: ResponseErrorObject | null;
}

/**
 * Canonical finish reason -> response status (SPEC "Response status"): `length` is `incomplete` with
 * reason `max_output_tokens`, `content-filter` is `incomplete` with reason `content_filter`; a finish
 * that reports an error is `failed`; everything else is `completed`.
 */
export function mapFinishReason(reason: FinishReason): ResponseEnding {
  switch (reason) {
    case 'length':
      return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' }, error: null };
    case 'content-filter':
      return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' }, error: null };
    case 'error':
      return {
        status: 'failed',
        incompleteDetails: null,
        error: { code: 'server_error', message: 'The generation ended with an error.', type: 'server_error', param: null },
      };
    case 'stop':
    case 'stop-sequence':
    case 'tool-calls':
      return { status: 'completed', incompleteDetails: null, error: null };
  }
}
