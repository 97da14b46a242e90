/**
 * An upstream call on undici's dispatch interface: the response body is read straight from undici's
 * callbacks, with no Node stream between them and the provider. undici's `request()` wraps every body
 * in a Readable (a large object, events, a nextTick per end, and an async iterator with a promise per
 * read). Alone, a call made this way cost ~6 µs of CPU less, ~20% of the call (50 in flight against
 * the mock upstream); the whole server, ~14% less per request (docs/performance.md).
 *
 * What the Readable gave is kept here:
 * - backpressure: past HIGH_WATER_BYTES unread, undici is paused (the socket is no longer read) until
 *   the reader comes back;
 * - abort: the caller's cancellation aborts the request whether it is still queued, waiting for its
 *   headers, or streaming its body; the reason is what the reader sees;
 * - release: `destroy()` aborts an unfinished body (the connection is closed, which is how an upstream
 *   learns to stop); a body read to its end leaves the connection in the pool;
 * - the Pool's headers and body timeouts, which undici applies to every dispatch as before.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { util, type Dispatcher } from 'undici';
import type { Cancellation } from '../../core/cancellation.ts';
import type { UpstreamTrace } from '../../core/language-model.ts';

/** Unread bytes past which undici stops reading the socket until the reader catches up. */
const HIGH_WATER_BYTES = 64 * 1024;

/** What a body asks of its call: stop and restart reading the socket, or abort. */
export interface FlowControl {
  readonly paused: boolean;
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

/** A response whose status and headers have arrived; read its body to the end or destroy it, or the connection is not released. */
export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

/** The error a reader sees once the body was released by `destroy()` before its end. */
export class BodyReleasedError extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('The response body was released before its end.');
    this.name = 'BodyReleasedError';
  }
}

/**
 * A response body as undici delivers it. Read it with `read()` (every byte received since the last
 * read, in one buffer) or `text()` (the whole body); read it to its end or `destroy()` it. One reader.
 */
export class UpstreamBody {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private state: 'open' | 'ended' | 'failed' = 'open';
  private failure: unknown;
  private waiter: { resolve: (bytes: Buffer | undefined) => void; reject: (error: unknown) => void } | undefined;
  /** A delivery to the waiting reader is queued (`deliver`). */
  private delivering = false;
  /** The call's flow control while bytes may still arrive; undefined for a body made whole (`UpstreamBody.of`). */
  controller: FlowControl | undefined;

  /** A body that is already complete: for tests and in-process benchmarks that answer without a socket. */
  static of(bytes: Buffer | string): UpstreamBody {
    const body = new UpstreamBody();
    body.push(typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
    body.end();
    return body;
  }

  /** Bytes received and not yet read. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** True once the body has ended, failed or been released: nothing more will arrive. */
  get done(): boolean {
    return this.state !== 'open';
  }

  /** The bytes received since the last read (all of them, one buffer); undefined at the end. Rejects with the transport error or the abort reason. */
  read(): Promise<Buffer | undefined> {
    if (this.waiter !== undefined) return Promise.reject(new Error('An upstream body has one reader at a time.'));
    if (this.buffered > 0) return Promise.resolve(this.take());
    if (this.state === 'ended') return Promise.resolve(undefined);
    if (this.state === 'failed') return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The whole body as UTF-8 text. */
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for (let bytes = await this.read(); bytes !== undefined; bytes = await this.read()) parts.push(bytes);
    return parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8');
  }

  /** Releases an unfinished body: the request is aborted (its connection closed). A no-op once the body is done. */
  destroy(): void {
    if (this.state !== 'open') return;
    const controller = this.controller;
    const error = new BodyReleasedError();
    this.fail(error);
    controller?.abort(error);
  }

  /**
   * undici delivered bytes. A waiting reader is answered once undici is done with the whole socket read
   * (a microtask runs after its parse loop), with every chunk of it: one read of the body per socket
   * read, as a Readable gave, so that a stream that arrived at once is mapped as one batch.
   */
  push(chunk: Buffer): void {
    if (this.state !== 'open') return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.waiter !== undefined && !this.delivering) {
      this.delivering = true;
      queueMicrotask(this.deliver);
    }
    if (this.buffered >= HIGH_WATER_BYTES) this.controller?.pause();
  }

  /** The body ended; what is buffered is still read. */
  end(): void {
    if (this.state !== 'open') return;
    this.state = 'ended';
    this.release();
    // A delivery on its way gives the last bytes; the end is what the read after it sees.
    if (this.delivering) return;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.resolve(undefined);
    }
  }

  /** The body failed; unread bytes are dropped (as a destroyed stream drops them). */
  fail(error: unknown): void {
    if (this.state !== 'open') return;
    this.state = 'failed';
    this.failure = error;
    this.chunks = [];
    this.buffered = 0;
    this.release();
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.reject(error);
    }
  }

  /** Answers the waiting reader with what arrived (nothing when the body failed meanwhile: `fail` answered it). */
  private readonly deliver = (): void => {
    this.delivering = false;
    const waiter = this.waiter;
    if (waiter === undefined || this.buffered === 0) return;
    this.waiter = undefined;
    waiter.resolve(this.take());
  };

  /**
   * Drops the flow control once nothing more will arrive. A finished body is still referenced for a
   * while (by the provider, by undici's request); what it references then lives on too, and under load
   * a graph still reachable at two young-generation collections is promoted. A first version that kept
   * undici's controller (and through it the raw headers and the request) after the end made the server
   * promote ~4x the bytes per collection, with ~3x the full collections (--trace-gc-nvp,
   * docs/performance.md).
   */
  private release(): void {
    this.controller = undefined;
  }

  private take(): Buffer {
    const chunks = this.chunks;
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    if (this.controller?.paused === true && this.state === 'open') this.controller.resume();
    return bytes;
  }
}

/**
 * undici's handler for one call: the call's answer resolves with the status, headers and body once the
 * final headers arrive, and rejects with the transport error (or the abort reason) before that. Follows
 * the caller's cancellation until the call is over, and is the body's flow control.
 *
 * It implements the handler interface undici's own `request()` is built on (onConnect, onHeaders,
 * onData, onComplete, onError), which undici 7's types mark as superseded by onRequestStart /
 * onResponseStart / onResponseData / onResponseEnd / onResponseError. undici serves those through a
 * wrapper and a controller per call, which hold the raw headers and trailers for as long as undici holds
 * its handler; in the server they measured no cheaper. Moving to them is a change of this class only.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler, FlowControl {
  /**
   * Settles the call's answer; dropped once it has, as are the body, the cancellation and undici's
   * functions once the call is over (see UpstreamBody.release): undici keeps its handler for a while.
   */
  private settle: { resolve: (answer: UpstreamResponse) => void; reject: (error: unknown) => void } | undefined;
  /** The body, until the call is over. */
  private body: UpstreamBody | undefined = new UpstreamBody();
  /** The caller's cancellation, followed until the call is over. */
  private signal: Cancellation | undefined;
  /** Aborted by the caller, with this reason. */
  private aborted: { reason: unknown } | undefined;
  private readonly onAbort: () => void;
  /** undici's abort of this request (from onConnect) and its resume of a paused read (from onHeaders). */
  private abortRequest: ((error: Error) => void) | undefined;
  private resumeRead: (() => void) | undefined;
  paused = false;
  /** The attempt's trace (tracing on): told of the connect, the first byte and the end. */
  private trace: UpstreamTrace | undefined;

  /** Starts a call: `dispatch` hands the exchange to undici; the promise settles as described above. */
  static start(signal: Cancellation, dispatch: (exchange: UpstreamExchange) => void, trace?: UpstreamTrace): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => dispatch(new UpstreamExchange(signal, { resolve, reject }, trace)));
  }

  private constructor(
    signal: Cancellation,
    settle: { resolve: (answer: UpstreamResponse) => void; reject: (error: unknown) => void },
    trace: UpstreamTrace | undefined,
  ) {
    this.settle = settle;
    this.trace = trace;
    this.onAbort = () => this.abortCall(this.signal?.reason);
    if (signal.aborted) {
      this.abortCall(signal.reason);
    } else {
      this.signal = signal;
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onConnect(abort: (error?: Error) => void): void {
    this.trace?.connected();
    // Aborted while it was queued in the pool: undici takes the reason as soon as it can.
    if (this.aborted !== undefined) abort(this.aborted.reason as Error);
    else this.abortRequest = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    const settle = this.settle;
    if (statusCode < 200 || settle === undefined || this.body === undefined) return true;
    this.trace?.responded(statusCode);
    this.settle = undefined;
    this.resumeRead = resume;
    this.body.controller = this;
    settle.resolve({ status: statusCode, headers: util.parseHeaders(rawHeaders) as IncomingHttpHeaders, body: this.body });
    return !this.paused;
  }

  onData(chunk: Buffer): boolean {
    this.body?.push(chunk);
    return !this.paused;
  }

  onComplete(): void {
    this.trace?.ended();
    this.body?.end();
    this.finish();
  }

  onError(error: Error): void {
    // After an abort the caller's reason stands (undici reports the abort it was given).
    const reason = this.aborted === undefined ? error : this.aborted.reason;
    this.trace?.ended(reason);
    this.settle?.reject(reason);
    this.settle = undefined;
    this.body?.fail(reason);
    this.finish();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeRead?.();
  }

  /** The body was released before its end: the request is aborted (its connection closed). */
  abort(reason: Error): void {
    this.abortCall(reason);
  }

  private abortCall(reason: unknown): void {
    if (this.aborted !== undefined) return;
    this.aborted = { reason };
    this.trace?.ended(reason);
    const abortRequest = this.abortRequest;
    this.settle?.reject(reason);
    this.settle = undefined;
    this.body?.fail(reason);
    this.finish();
    abortRequest?.(reason as Error);
  }

  /** The call is over: stop following the cancellation and let go of the body and of undici's functions. */
  private finish(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.signal = undefined;
    this.body = undefined;
    this.abortRequest = undefined;
    this.resumeRead = undefined;
    this.trace = undefined;
  }
}
