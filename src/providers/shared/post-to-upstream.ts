/**
 * The one way a remote provider calls its upstream (after vercel/ai provider-utils `postJsonToApi`):
 * POST a JSON body with the provider's headers, the `accept` the caller reads and the request's
 * `x-request-id`; a non-2xx answer is read (at most 64 KiB) and thrown as the provider's own
 * UpstreamError (`<kind>-error.ts` `statusError`). What a 2xx body holds is the caller's business:
 * stream-from-upstream.ts for chat answers, `readUpstreamJson` below for one JSON reply.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CallOptions } from '../../core/language-model.ts';
import { upstreamConnectionError, type UpstreamError } from '../../core/upstream-error.ts';
import type { UpstreamHttpClient, UpstreamResponse } from './http-client.ts';
import { parseJson } from './lenient-json.ts';

/** A provider's mapping of an error status and its body to an UpstreamError (`<kind>-error.ts`). */
export type UpstreamStatusError = (
  status: number,
  bodyText: string,
  headers: IncomingHttpHeaders,
  sanitize: (message: string) => string,
) => UpstreamError;

/**
 * POSTs `payload` to `{baseUrl}{path}` and resolves with the 2xx response (its body unread). Throws the
 * provider's UpstreamError for any other status, an UpstreamError for a transport failure, or the
 * signal's reason when aborted. `headers` are the provider's; `accept` and `x-request-id` are added here.
 */
export async function postToUpstream(
  client: UpstreamHttpClient,
  path: string,
  payload: unknown,
  accept: string,
  headers: Record<string, string>,
  options: CallOptions,
  statusError: UpstreamStatusError,
): Promise<UpstreamResponse> {
  const requestHeaders: Record<string, string> = { accept, ...headers };
  if (options.requestId !== undefined) requestHeaders['x-request-id'] = options.requestId;
  const response = await client.postJson(path, payload, requestHeaders, options.signal, options.trace);
  if (response.status < 200 || response.status >= 300) {
    const text = await client.readErrorText(response);
    throw statusError(response.status, text, response.headers, client.sanitizer);
  }
  return response;
}

/**
 * POSTs JSON and returns the parsed JSON reply (embeddings, moderations, images). Throws like
 * `postToUpstream`, and an UpstreamError for a body that is not JSON.
 */
export async function postForUpstreamJson(
  client: UpstreamHttpClient,
  path: string,
  payload: unknown,
  headers: Record<string, string>,
  options: CallOptions,
  statusError: UpstreamStatusError,
): Promise<unknown> {
  const response = await postToUpstream(client, path, payload, 'application/json', headers, options, statusError);
  let text: string;
  try {
    text = await response.body.text();
  } catch (error) {
    throw client.transportError(error, options.signal);
  }
  const json = parseJson(text);
  if (json === undefined) throw upstreamConnectionError('the provider answered with a body that is not JSON');
  return json;
}
