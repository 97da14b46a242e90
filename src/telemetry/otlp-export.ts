/**
 * The batch export of ended spans over OTLP/HTTP (protobuf or JSON), as the SDK's BatchSpanProcessor and OTLP
 * exporter do it, with the same settings and defaults: a bounded queue (OTEL_BSP_MAX_QUEUE_SIZE, 2048
 * spans; beyond it spans are dropped and the drop is reported), batches of at most
 * OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512) sent when that many wait or every OTEL_BSP_SCHEDULE_DELAY (5 s),
 * one export in flight at a time, each bounded by OTEL_BSP_EXPORT_TIMEOUT (30 s) over its retries and
 * each request by OTEL_EXPORTER_OTLP_TIMEOUT (10 s), gzip with OTEL_EXPORTER_OTLP_COMPRESSION=gzip,
 * retries with backoff on 429/502/503/504 and on a refused or reset connection. Ending a span is one
 * push onto the queue; encoding happens when a batch leaves, from a timer or an immediate, never on
 * the request's path. An export that fails is logged and its spans dropped: requests never wait for it.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipped = promisify(gzip);

export interface ExportSettings {
  url: string;
  /** The body's content type (`application/x-protobuf` or `application/json`). */
  contentType: string;
  headers: Readonly<Record<string, string>>;
  compression: 'gzip' | 'none';
  /** One HTTP request's bound. */
  timeoutMillis: number;
  scheduleDelayMillis: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  /** One export's bound, its retries included. */
  exportTimeoutMillis: number;
}

export const EXPORT_DEFAULTS = {
  compression: 'none',
  timeoutMillis: 10_000,
  scheduleDelayMillis: 5_000,
  maxQueueSize: 2_048,
  maxExportBatchSize: 512,
  exportTimeoutMillis: 30_000,
} as const;

/** Where export failures and dropped spans are reported. */
export interface ExportLogger {
  warn(details: object, message: string): void;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const RETRYABLE_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const MAX_ATTEMPTS = 5;
const INITIAL_BACKOFF_MILLIS = 1_000;
const MAX_BACKOFF_MILLIS = 5_000;

class ExportFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMillis?: number,
  ) {
    super(message);
  }
}

function retryAfter(response: IncomingMessage): number | undefined {
  const header = response.headers['retry-after'];
  if (header === undefined) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis).unref());

export class OtlpExporter<T> {
  private queue: T[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate = false;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  /** Shutting down: one try per batch, no retry (a receiver that is down must not hold the exit). */
  private closing = false;
  private readonly agent: HttpAgent;
  private readonly secure: boolean;

  constructor(
    private readonly settings: ExportSettings,
    private readonly encode: (items: readonly T[]) => Buffer | string,
    private readonly logger: ExportLogger | undefined,
  ) {
    this.secure = settings.url.startsWith('https:');
    this.agent = this.secure ? new HttpsAgent({ keepAlive: true, maxSockets: 2 }) : new HttpAgent({ keepAlive: true, maxSockets: 2 });
  }

  /** Queues one ended span: a push, and a timer or an immediate when none is set. */
  add(item: T): void {
    if (this.stopped) return;
    const queue = this.queue;
    if (queue.length >= this.settings.maxQueueSize) {
      this.dropped++;
      return;
    }
    queue.push(item);
    if (queue.length >= this.settings.maxExportBatchSize) {
      if (!this.immediate && this.inFlight === undefined) {
        this.immediate = true;
        setImmediate(() => {
          this.immediate = false;
          this.sendNext();
        });
      }
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.sendNext();
      }, this.settings.scheduleDelayMillis).unref();
    }
  }

  /** Sends one batch if none is in flight; what is left waits for the next turn. */
  private sendNext(): void {
    if (this.inFlight !== undefined || this.queue.length === 0) return;
    this.inFlight = this.exportBatch().finally(() => {
      this.inFlight = undefined;
      if (this.queue.length >= this.settings.maxExportBatchSize) this.sendNext();
      else if (this.queue.length > 0 && this.timer === undefined && !this.stopped)
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.sendNext();
        }, this.settings.scheduleDelayMillis).unref();
    });
  }

  private async exportBatch(): Promise<void> {
    const batch = this.queue.splice(0, this.settings.maxExportBatchSize);
    if (this.dropped > 0) {
      this.logger?.warn({ dropped: this.dropped }, `tracing: dropped ${this.dropped} spans: the export queue was full`);
      this.dropped = 0;
    }
    try {
      const encoded = this.encode(batch);
      let body: Buffer = typeof encoded === 'string' ? Buffer.from(encoded) : encoded;
      if (this.settings.compression === 'gzip') body = await gzipped(body);
      await this.sendWithRetries(body);
    } catch (error) {
      this.logger?.warn(
        { details: [String((error as Error).message ?? error)], spans: batch.length },
        `tracing: export of ${batch.length} spans failed`,
      );
    }
  }

  private async sendWithRetries(body: Buffer): Promise<void> {
    const deadline = Date.now() + this.settings.exportTimeoutMillis;
    let backoff = INITIAL_BACKOFF_MILLIS;
    for (let attempt = 1; ; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('export timed out');
      try {
        return await this.post(body, Math.min(left, this.settings.timeoutMillis));
      } catch (error) {
        if (!(error instanceof ExportFailure) || !error.retryable || attempt >= MAX_ATTEMPTS || this.closing) throw error;
        // Exponential backoff with jitter, or what the receiver asked for.
        const wait = error.retryAfterMillis ?? Math.random() * backoff;
        backoff = Math.min(backoff * 1.5, MAX_BACKOFF_MILLIS);
        if (Date.now() + wait >= deadline) throw error;
        await sleep(wait);
      }
    }
  }

  private post(body: Buffer, timeoutMillis: number): Promise<void> {
    const { settings } = this;
    const headers: Record<string, string | number> = {
      ...settings.headers,
      'content-type': settings.contentType,
      'content-length': body.length,
    };
    if (settings.compression === 'gzip') headers['content-encoding'] = 'gzip';
    return new Promise((resolve, reject) => {
      const send = this.secure ? httpsRequest : httpRequest;
      const request = send(settings.url, { method: 'POST', headers, agent: this.agent, timeout: timeoutMillis }, (response) => {
        const status = response.statusCode ?? 0;
        response.resume();
        response.on('error', () => undefined);
        if (status >= 200 && status < 300) resolve();
        else
          reject(
            new ExportFailure(`the OTLP receiver answered ${status}`, RETRYABLE_STATUS.has(status), retryAfter(response) ?? undefined),
          );
      });
      request.on('timeout', () => request.destroy(new ExportFailure(`no answer within ${timeoutMillis} ms`, true)));
      request.on('error', (error: NodeJS.ErrnoException) => {
        reject(error instanceof ExportFailure ? error : new ExportFailure(error.message, RETRYABLE_ERRORS.has(error.code ?? '')));
      });
      request.end(body);
    });
  }

  /** Sends everything queued now (batch after batch) and resolves when it has been sent or has failed. */
  async forceFlush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    let rounds = Math.ceil(this.queue.length / this.settings.maxExportBatchSize) + 1;
    while (rounds-- > 0) {
      if (this.inFlight !== undefined) await this.inFlight;
      if (this.queue.length === 0) break;
      this.sendNext();
    }
    if (this.inFlight !== undefined) await this.inFlight;
  }

  /** Sends what is left, then stops: later spans are dropped. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.closing = true;
    await this.forceFlush();
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.agent.destroy();
  }
}
