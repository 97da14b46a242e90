/**
 * An OpenAI-compatible upstream with a fixed latency for every chat completion (OpenAI wire format,
 * streamed or not), for batch crash tests and the multi-instance batch bench: real HTTP, no script.
 * Counts the requests it answered.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class LatencyUpstream {
  private server: Server | undefined;
  /** Chat completions answered so far. */
  answered = 0;

  constructor(private readonly latencyMs: number) {}

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        if (request.method !== 'POST' || !(request.url ?? '').startsWith('/v1/chat/completions')) {
          response
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
          return;
        }
        const parsed = JSON.parse(body) as { model?: string; stream?: boolean };
        const model = parsed.model ?? 'mock-model';
        const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };
        setTimeout(() => {
          this.answered += 1;
          if (parsed.stream === true) {
            const base = { id: 'chatcmpl-latency', object: 'chat.completion.chunk', created: 1_770_000_000, model };
            const events = [
              { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: { content: 'ok done' }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
              { ...base, choices: [], usage },
            ];
            response.writeHead(200, { 'content-type': 'text/event-stream' });
            response.end(`${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`);
            return;
          }
          response.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              id: 'chatcmpl-latency',
              object: 'chat.completion',
              created: 1_770_000_000,
              model,
              choices: [{ index: 0, message: { role: 'assistant', content: 'ok done' }, finish_reason: 'stop' }],
              usage,
            }),
          );
        }, this.latencyMs);
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** `http://127.0.0.1:<port>/v1`. */
  get baseUrl(): string {
    const address = this.server?.address() as AddressInfo | undefined;
    if (address === undefined) throw new Error('not started');
    return `http://127.0.0.1:${address.port}/v1`;
  }

  /** Writes a Switchyard config file serving this upstream as model `slow-model` (no bootstrap key). */
  writeConfig(path: string): void {
    writeFileSync(
      path,
      JSON.stringify({
        bootstrapKey: false,
        providers: { up: { kind: 'openai-compatible', baseUrl: this.baseUrl, maxRetries: 0 } },
        models: [{ id: 'slow-model', provider: 'up', capabilities: ['chat'] }],
      }),
    );
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }
}

/**
 * A JSONL batch input of `lines` chat requests to `slow-model` (the model `writeConfig` serves), with
 * custom ids `<prefix>-<n>`.
 */
export function slowModelBatchInput(lines: number, prefix: string): string {
  return Array.from({ length: lines }, (_, index) =>
    JSON.stringify({
      custom_id: `${prefix}-${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'slow-model', messages: [{ role: 'user', content: `line ${index}` }], max_tokens: 5 },
    }),
  ).join('\n');
}
