/**
 * Downloads a URL that an upstream handed over (an image backend's `url` result) without letting that
 * upstream aim Switchyard at its own network: only http(s), only public addresses
 * (`core/public-address.ts`), checked after DNS resolution on the address the socket then connects to
 * (the check is the connection's own DNS lookup, so a name that resolves differently a second time,
 * DNS rebinding, cannot swap in another address), redirects followed at most `maxRedirects` times and
 * each new location checked the same way, at most `maxBytes` read.
 *
 * `allowAddress` replaces the public-address rule: operators whose backend serves images from a
 * private network opt out of it explicitly (the provider's `allowPrivateImageUrls`).
 */
import { Agent, request as undiciRequest } from 'undici';
import { addressLiteralOf, guardedLookup, isAddressRefusal, isPublicAddress } from '../../core/public-address.ts';

export interface GuardedDownloadOptions {
  signal: AbortSignal;
  /** Wait for headers and between body reads, milliseconds. */
  timeoutMs: number;
  /** Largest body read, bytes. */
  maxBytes: number;
  /** Redirects followed at most (each location checked again). Default 3. */
  maxRedirects?: number;
  /** Which resolved addresses may be connected to. Default: public ones only. */
  allowAddress?: (address: string) => boolean;
}

export interface GuardedDownload {
  bytes: Buffer;
  /** The answer's content-type, lower-cased, without parameters. */
  contentType: string | undefined;
}

/** Why a download was refused or failed; `message` names no address or host. */
export class GuardedDownloadError extends Error {
  constructor(
    message: string,
    /** The final HTTP status when the refusal is an answer's status. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'GuardedDownloadError';
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Refuses a URL that is not http(s), or whose host is an address literal that `allow` refuses. */
function checkUrl(url: URL, allow: (address: string) => boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GuardedDownloadError('the URL is not http(s)');
  const literal = addressLiteralOf(url);
  // Address literals are connected to without a lookup: checked here.
  if (literal !== undefined && !allow(literal)) throw new GuardedDownloadError('the URL points to an address that is not public');
}

export async function guardedDownload(url: string, options: GuardedDownloadOptions): Promise<GuardedDownload> {
  const allow = options.allowAddress ?? isPublicAddress;
  const maxRedirects = options.maxRedirects ?? 3;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new GuardedDownloadError('the URL is not valid');
  }
  // One agent per download: its connections use the guarded lookup and end with it.
  const agent = new Agent({ connect: { lookup: guardedLookup(allow) as never } });
  try {
    for (let redirects = 0; ; redirects++) {
      checkUrl(target, allow);
      const response = await undiciRequest(target, {
        method: 'GET',
        dispatcher: agent,
        signal: options.signal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      const location = response.headers['location'];
      if (REDIRECT_STATUSES.has(response.statusCode) && typeof location === 'string') {
        await response.body.dump();
        if (redirects >= maxRedirects) throw new GuardedDownloadError(`the URL redirects more than ${maxRedirects} times`);
        try {
          target = new URL(location, target);
        } catch {
          throw new GuardedDownloadError('the URL redirects to a location that is not valid');
        }
        continue;
      }
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump();
        throw new GuardedDownloadError(`the download failed (HTTP ${response.statusCode})`, response.statusCode);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        size += buffer.length;
        if (size > options.maxBytes) {
          response.body.destroy();
          throw new GuardedDownloadError(`the download is larger than ${options.maxBytes} bytes`);
        }
        chunks.push(buffer);
      }
      const contentType = response.headers['content-type'];
      return {
        bytes: Buffer.concat(chunks),
        contentType: typeof contentType === 'string' ? contentType.split(';')[0]!.trim().toLowerCase() : undefined,
      };
    }
  } catch (error) {
    // The guarded lookup's refusal comes back wrapped as a connection error.
    if (error instanceof GuardedDownloadError) throw error;
    if (isAddressRefusal(error)) {
      throw new GuardedDownloadError('the URL resolves to an address that is not public');
    }
    throw error;
  } finally {
    void agent.close().catch(() => undefined);
  }
}
