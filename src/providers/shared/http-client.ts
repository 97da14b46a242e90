/**
 * The HTTP client of every remote provider: one undici Pool (keep-alive connections) per configured
 * provider instance, JSON requests, streamed response bodies, abort through the caller's signal, and
 * transport failures turned into UpstreamErrors whose messages never name the upstream host or key.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import { sanitizeUpstreamMessage, upstreamConnectionError, upstreamTimeoutError, type UpstreamError } from '../../core/upstream-error.ts';
import type { Cancellation } from '../../core/cancellation.ts';
import type { UpstreamTrace } from '../../core/language-model.ts';
import { UpstreamExchange, type UpstreamResponse } from './upstream-body.ts';

export interface UpstreamHttpClientOptions {
  /** Base URL of the upstream API, with or without a path prefix (`http://127.0.0.1:11434/v1`). */
  baseUrl: string;
  /** Longest wait for response headers and longest silence between body chunks, milliseconds. */
  timeoutMs: number;
  /** The upstream API key, only so that it can be scrubbed from error messages. */
  apiKey?: string | undefined;
  /** Largest number of simultaneous connections to the upstream; unlimited when undefined. */
  connections?: number;
}

export type { UpstreamResponse } from './upstream-body.ts';

/** How long an idle keep-alive connection is kept, milliseconds (upstream hints may shorten it). */
const KEEP_ALIVE_TIMEOUT_MS = 30_000;
/** Most bytes of an error body read to build an error message. */
const ERROR_BODY_LIMIT_BYTES = 64 * 1024;

export class UpstreamHttpClient {
  private readonly pool: Pool;
  /** The path prefix of the base URL, without a trailing slash (`/v1`, or `` for none). */
  private readonly basePath: string;
  /** Strings scrubbed from every error message: key (every key it had, when read from a file), base URL, origin and host. */
  secrets: readonly string[];
  readonly timeoutMs: number;

  constructor(options: UpstreamHttpClientOptions) {
    const url = new URL(options.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
    this.pool = new Pool(url.origin, {
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
    this.secrets = [options.apiKey, options.baseUrl, url.origin, url.host].filter(
      (secret): secret is string => secret !== undefined && secret.length > 0,
    );
  }

  /** Scrubs this upstream's key and address (and every URL and key-shaped string) from a message. */
  sanitize(message: string): string {
    return sanitizeUpstreamMessage(message, this.secrets);
  }

  /** Adds a key read later (a key file changed): scrubbed from messages like the first. */
  addSecret(secret: string): void {
    if (secret.length > 0 && !this.secrets.includes(secret)) this.secrets = [secret, ...this.secrets];
  }

  /** `sanitize` as a function value, made once per client (error mappers take it as an argument). */
  readonly sanitizer = (message: string): string => this.sanitize(message);

  /**
   * POSTs a JSON body to `{baseUrl}{path}`. Resolves with the response whatever its status; rejects with
   * the signal's reason when aborted, or with an UpstreamError for transport failures. With a `trace`
   * (tracing on), its `traceparent` is sent and the call reports its connect, first byte and end to it.
   */
  async postJson(
    path: string,
    payload: unknown,
    headers: Record<string, string>,
    signal: Cancellation,
    trace?: UpstreamTrace,
  ): Promise<UpstreamResponse> {
    // undici's dispatch interface, not request(): the body is read from undici's callbacks with no
    // Readable in between (upstream-body.ts). The exchange follows the caller's cancellation itself.
    try {
      return await UpstreamExchange.start(
        signal,
        (exchange) =>
          this.pool.dispatch(
            {
              method: 'POST',
              path: `${this.basePath}${path}`,
              headers:
                trace === undefined
                  ? { 'content-type': 'application/json', ...headers }
                  : { 'content-type': 'application/json', ...headers, ...trace.headers },
              body: JSON.stringify(payload),
            },
            exchange,
          ),
        trace,
      );
    } catch (error) {
      throw this.transportError(error, signal);
    }
  }

  /**
   * Maps an error thrown while sending or reading (socket reset, timeouts) to an UpstreamError, or
   * returns the signal's reason when the caller aborted: callers `throw client.transportError(...)`.
   */
  transportError(error: unknown, signal: Cancellation): unknown {
    if (signal.aborted) return signal.reason;
    const code = errorCode(error);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return upstreamTimeoutError(this.timeoutMs, error);
    return upstreamConnectionError(describeTransportFailure(code), error);
  }

  /** Reads a (small) error body as text, at most 64 KiB; never throws. */
  async readErrorText(response: UpstreamResponse): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for (let bytes = await response.body.read(); bytes !== undefined; bytes = await response.body.read()) {
        chunks.push(bytes);
        size += bytes.length;
        if (size >= ERROR_BODY_LIMIT_BYTES) break;
      }
    } catch {
      // A broken error body still leaves the status to report.
    } finally {
      response.body.destroy();
    }
    return Buffer.concat(chunks).subarray(0, ERROR_BODY_LIMIT_BYTES).toString('utf8');
  }

  /** Closes idle connections and waits for running requests to end. */
  async close(): Promise<void> {
    if (!this.pool.closed) await this.pool.close();
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Connecting to several addresses fails as an AggregateError whose members carry the codes.
  const inner = (error as { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.length > 0 ? errorCode(inner[0]) : undefined;
}

/** Describes a transport failure without the host, port or path that Node's own messages contain. */
function describeTransportFailure(code: string | undefined): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'the connection was reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name could not be resolved';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connecting timed out';
    case 'UND_ERR_CLOSED':
    case 'UND_ERR_DESTROYED':
      return 'the provider is shutting down';
    default:
      return code === undefined ? 'the connection failed' : `the connection failed (${code})`;
  }
}

/** Reads a header that may be repeated, as one string. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** An UpstreamError for a stream that ended before its closing event. */
export function streamEndedEarlyError(): UpstreamError {
  return upstreamConnectionError('the response stream ended before it was complete');
}

/** Longest wait for the end of a body after its closing event, milliseconds. */
const DRAIN_LIMIT_MS = 1000;

/**
 * Reading a body to its very end after the closing event (`[DONE]`, `message_stop`) lets undici put
 * the connection back into the keep-alive pool instead of closing it. An upstream that keeps the body
 * open after its closing event is cut after a short grace period.
 */
export class BodyDrain {
  private timer: NodeJS.Timeout | undefined;
  /** True once the closing event was seen: what follows is read and ignored. */
  started = false;

  constructor(private readonly response: UpstreamResponse) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.timer = setTimeout(() => this.response.body.destroy(), DRAIN_LIMIT_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}
