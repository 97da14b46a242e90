/**
 * POSTs one signed webhook with undici, bounded on every side: the whole attempt (connection, TLS,
 * answer) within `timeoutMs`, at most a few connections per endpoint, redirects not followed (a
 * receiver answers 2xx or the delivery failed), at most 4 KB of the answer read and thrown away. Unless
 * private addresses are allowed, an address literal is checked before connecting and a name through
 * the connection's own DNS lookup (core/public-address.ts `guardedLookup`), so the address checked is
 * the one connected to. Failures are described without the URL (it may carry a token) or an address.
 */
import { Agent, request as undiciRequest } from 'undici';
import { parseRetryAfter } from '../../core/retry.ts';
import { addressLiteralOf, guardedLookup, isAddressRefusal, isPublicAddress } from '../../core/public-address.ts';

export interface WebhookSenderOptions {
  /** Connect to non-public addresses too (ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses: boolean;
  /** Plain `http://` endpoints may be delivered to (ALERT_WEBHOOKS_ALLOW_HTTP). */
  allowHttp: boolean;
  /** Longest one attempt may take, ms. */
  timeoutMs: number;
}

export type PostOutcome =
  | { ok: true; status: number }
  | {
      ok: false;
      /** The answer's HTTP status, or null when none came. */
      status: number | null;
      /** What went wrong, for the delivery log: no URL, no address, no secret. */
      error: string;
      /** A delay the endpoint asked for (`retry-after` on 429 or 503), ms; null when none. */
      retryAfterMs: number | null;
    };

const NO_ANSWER: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  UND_ERR_SOCKET: 'the connection was closed',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (DNS)',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
};

function errorCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let hops = 0; current !== undefined && current !== null && hops < 5; hops++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A failure without an answer, in words. */
function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs} ms`;
  if (isAddressRefusal(error)) return 'the URL resolves to an address that is not public';
  const code = errorCodeOf(error);
  if (code === undefined) return 'the request failed';
  if (code in NO_ANSWER) return NO_ANSWER[code]!;
  if (code.includes('TIMEOUT')) return `no answer within ${timeoutMs} ms`;
  if (code.includes('CERT') || code.includes('TLS') || code.includes('SSL') || code.includes('SELF_SIGNED')) return `TLS failed (${code})`;
  return `the request failed (${code})`;
}

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookSenderOptions) {
    this.agent = new Agent({
      connections: 4,
      keepAliveTimeout: 4_000,
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateAddresses ? {} : { lookup: guardedLookup(isPublicAddress) as never }),
      },
    });
  }

  /** POSTs `body` with `headers`; `stop` aborts it (the instance is stopping). Never throws. */
  async post(target: string, headers: Record<string, string>, body: string, stop: AbortSignal): Promise<PostOutcome> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return { ok: false, status: null, error: 'the URL is not valid', retryAfterMs: null };
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.options.allowHttp)) {
      return {
        ok: false,
        status: null,
        error: 'plain http:// is no longer allowed (ALERT_WEBHOOKS_ALLOW_HTTP is off)',
        retryAfterMs: null,
      };
    }
    const literal = addressLiteralOf(url);
    // Address literals are connected to without a lookup: checked here.
    if (literal !== undefined && !this.options.allowPrivateAddresses && !isPublicAddress(literal)) {
      return { ok: false, status: null, error: 'the URL points to an address that is not public', retryAfterMs: null };
    }
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await undiciRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Switchyard-Webhooks/1', ...headers },
        body,
        dispatcher: this.agent,
        signal: AbortSignal.any([stop, timeout]),
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      await response.body.dump({ limit: 4096 }).catch(() => undefined);
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status };
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.headers as Record<string, string>) : null;
      return { ok: false, status, error: `the endpoint answered HTTP ${status}`, retryAfterMs };
    } catch (error) {
      const timedOut = timeout.aborted && !stop.aborted;
      return { ok: false, status: null, error: describeFailure(error, timedOut, this.options.timeoutMs), retryAfterMs: null };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
