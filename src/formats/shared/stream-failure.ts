/**
 * The stream-failure rule every generation encoder follows (core/generation-format.ts `encodeStream`):
 * before the first event a failure is THROWN, so the edge can still answer with an HTTP status; after it,
 * the failure becomes the format's own error event and the stream ends. A source that ends without
 * `finish` is such a failure too. Chat completions never throws (its clients read an error chunk either
 * way) and uses only `streamFailure`.
 */
import { isServiceError, serverError, type ServiceError } from '../../core/service-error.ts';

/** Message of an unknown error raised while streaming. */
export const STREAM_FAILED_MESSAGE = 'The generation failed while streaming.';
/** Message of a source that ended without `finish`. */
export const STREAM_ENDED_EARLY_MESSAGE = 'The generation stream ended before it was complete.';

/** Throws `error` when nothing was sent yet; otherwise returns it for the format's error event. */
export function failureAfterStart(error: unknown, started: boolean): unknown {
  if (!started) throw error;
  return error;
}

/** An error raised while streaming as the ServiceError a stream reports: unknown errors get a generic message (their text may name upstream hosts or keys). */
export function streamFailure(error: unknown): ServiceError {
  return isServiceError(error) ? error : serverError('internal_error', STREAM_FAILED_MESSAGE, error);
}

/** The failure of a source that ended without `finish`: thrown when nothing was sent yet, else returned. */
export function endedEarly(started: boolean, message = STREAM_ENDED_EARLY_MESSAGE): ServiceError {
  const incomplete = serverError('internal_error', message);
  if (!started) throw incomplete;
  return incomplete;
}
