/**
 * A real node:http server on 127.0.0.1 (port 0) that plays an upstream model API for tests: it
 * answers from a queue of scripted behaviours (then from a default), records every request, and can
 * misbehave on demand (error statuses, hang, reset, streams cut or stalled mid-way).
 * The wire formats live in the subclasses (openai-compatible-mock.ts, anthropic-mock.ts).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One server-sent event as the mock writes it: `event:` line (optional) and `data:` (objects are JSON-encoded). */
export interface MockSseEvent {
  event?: string;
  data: unknown;
}

/** How a stream ends early. */
export interface MockInterruption {
  /** Events written before the interruption. */
  afterEvents: number;
  /** `reset`: destroy the socket (the client sees a connection error); `hang`: stay silent, never end. */
  how: 'reset' | 'hang';
}

export interface MockStreamOptions {
  /** Pause before each event, milliseconds. */
  delayMs?: number;
  /** Write the serialised stream in pieces of this many bytes (each piece its own write), to split events anywhere. */
  chunkSize?: number;
  interrupt?: MockInterruption;
}

/**
 * What the mock does with one request. `Reply` is the wire format's scripted reply (text, tool calls,
 * usage...), rendered as a stream or a JSON body depending on the request's `stream` flag.
 */
export type MockBehaviour<Reply> =
  /** A scripted reply in the upstream's wire format. */
  | ({ type: 'reply'; reply: Reply } & MockStreamOptions)
  /** SSE events replayed as given (recorded fixtures); status 200, `text/event-stream`. */
  | ({ type: 'events'; events: MockSseEvent[] } & MockStreamOptions)
  /** A JSON body with a status (200 by default) and extra headers. */
  | { type: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  /** An error status with the upstream's error body (`message` and `errorType` fill the default body; `body` replaces it). */
  | { type: 'error'; status: number; message?: string; errorType?: string; body?: unknown; headers?: Record<string, string> }
  /** Any status, headers and raw body text (HTML error pages, plain text). */
  | { type: 'raw'; status: number; body: string; headers?: Record<string, string> }
  /** Accept the request and never answer (for timeouts). */
  | { type: 'hang' }
  /** Destroy the connection without answering. */
  | { type: 'reset' };

/** How the exchange with one request ended, as the server saw it. */
export type MockOutcome = 'completed' | 'closed-by-client' | 'reset-by-server';

export interface RecordedRequest {
  method: string;
  /** Path with query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: unknown;
  /** The client's port: requests that share it came over one keep-alive connection. */
  remotePort: number;
  /** Settles when the response is over: completed, closed by the client first (abort), or reset by the mock. */
  outcome: Promise<MockOutcome>;
}

/** A behaviour, or a function choosing one from the request (for defaults that depend on the body). */
export type MockBehaviourSource<Reply> = MockBehaviour<Reply> | ((request: RecordedRequest) => MockBehaviour<Reply>);

export abstract class MockUpstreamServer<Reply> {
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Array<MockBehaviourSource<Reply>> = [];
  private readonly sockets = new Set<Socket>();
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];
  private server: Server | undefined;
  private port = 0;

  /** Used when the queue is empty. */
  protected abstract defaultBehaviour(request: RecordedRequest): MockBehaviour<Reply>;
  /** The upstream's error body for a status. */
  protected abstract errorBody(status: number, message: string, errorType: string | undefined): unknown;
  /** SSE events of a scripted reply. */
  protected abstract replyEvents(reply: Reply, request: RecordedRequest): MockSseEvent[];
  /** Whole JSON body of a scripted reply (requests without `stream: true`). */
  protected abstract replyBody(reply: Reply, request: RecordedRequest): unknown;

  /** Starts listening on 127.0.0.1 and a free port. */
  async start(): Promise<this> {
    const server = createServer((request, response) => void this.handle(request, response));
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** `http://127.0.0.1:<port>` (no path). */
  get url(): string {
    if (this.server === undefined) throw new Error('The mock upstream is not started: await start() first.');
    return `http://127.0.0.1:${this.port}`;
  }

  /** Connections currently open (keep-alive ones included). */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Queues behaviours for the next requests, one each, in order. */
  enqueue(...behaviours: Array<MockBehaviourSource<Reply>>): this {
    this.queue.push(...behaviours);
    return this;
  }

  /** Forgets queued behaviours and recorded requests (between tests sharing one server). */
  reset(): this {
    this.queue.length = 0;
    this.requests.length = 0;
    return this;
  }

  /** Resolves once at least `count` requests have arrived in total. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Closes every connection (hanging ones included) and stops listening. */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    response.on('error', () => undefined);
    let settle: (outcome: MockOutcome) => void = () => undefined;
    const outcome = new Promise<MockOutcome>((resolve) => (settle = resolve));
    let resetByServer = false;
    response.on('close', () => settle(response.writableFinished ? 'completed' : resetByServer ? 'reset-by-server' : 'closed-by-client'));

    const text = await readBody(request);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      headers: request.headers,
      body,
      remotePort: request.socket.remotePort ?? 0,
      outcome,
    };
    this.requests.push(recorded);
    for (const waiter of this.waiters.filter((entry) => this.requests.length >= entry.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }

    const source = this.queue.shift() ?? ((next: RecordedRequest) => this.defaultBehaviour(next));
    const behaviour = typeof source === 'function' ? source(recorded) : source;
    const resetSocket = (): void => {
      resetByServer = true;
      request.socket.destroy();
    };
    switch (behaviour.type) {
      case 'reply':
        if (wantsStream(body)) await this.writeStream(response, this.replyEvents(behaviour.reply, recorded), behaviour, resetSocket);
        else {
          // A whole JSON body is one event: `delayMs` pauses before it (a slow, non-streamed answer).
          if (behaviour.delayMs !== undefined && behaviour.delayMs > 0)
            await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
          if (!response.destroyed) sendJson(response, 200, this.replyBody(behaviour.reply, recorded));
        }
        break;
      case 'events':
        await this.writeStream(response, behaviour.events, behaviour, resetSocket);
        break;
      case 'json':
        sendJson(response, behaviour.status ?? 200, behaviour.body, behaviour.headers);
        break;
      case 'error':
        sendJson(
          response,
          behaviour.status,
          behaviour.body ??
            this.errorBody(behaviour.status, behaviour.message ?? `Mock upstream error ${behaviour.status}.`, behaviour.errorType),
          behaviour.headers,
        );
        break;
      case 'raw':
        response.writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers });
        response.end(behaviour.body);
        break;
      case 'hang':
        break;
      case 'reset':
        resetSocket();
        break;
    }
  }

  private async writeStream(
    response: ServerResponse,
    events: MockSseEvent[],
    options: MockStreamOptions,
    resetSocket: () => void,
  ): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    response.flushHeaders();
    const limit = options.interrupt?.afterEvents ?? events.length;
    for (const [index, event] of events.entries()) {
      if (index >= limit || response.destroyed) break;
      if (options.delayMs !== undefined && options.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const serialised = serialiseEvent(event);
      if (options.chunkSize === undefined) response.write(serialised);
      else {
        const bytes = Buffer.from(serialised, 'utf8');
        for (let offset = 0; offset < bytes.length; offset += options.chunkSize) {
          response.write(bytes.subarray(offset, offset + options.chunkSize));
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }
    if (response.destroyed) return;
    if (options.interrupt?.how === 'reset') {
      // Let the written events leave before the connection is destroyed.
      await new Promise((resolve) => setTimeout(resolve, 20));
      resetSocket();
    } else if (options.interrupt?.how !== 'hang') response.end();
  }
}

function wantsStream(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

function serialiseEvent(event: MockSseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  const lines = data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('');
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}${lines}\n`;
}
