/**
 * A real HTTP server that receives webhooks for tests: it keeps every request (path, headers, body,
 * when it arrived and when it was answered) and answers as told: `ok` (204), `down` (503), or `slow`
 * (200 after `slowMs`). The mode can change while it runs.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Milliseconds since the epoch. */
  receivedAt: number;
  /** When the answer was sent; undefined while it waits (slow mode). */
  answeredAt?: number;
}

export type ReceiverMode = 'ok' | 'down' | 'slow';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  received: ReceivedWebhook[];
  mode: ReceiverMode;
  /** How long `slow` waits before answering, ms. */
  slowMs: number;
  /** The requests to one path. */
  at(path: string): ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(mode: ReceiverMode = 'ok', slowMs = 10_000): Promise<WebhookReceiver> {
  const waiting = new Set<NodeJS.Timeout>();
  const receiver: WebhookReceiver = {
    origin: '',
    received: [],
    mode,
    slowMs,
    at: (path) => receiver.received.filter((request) => request.path === path),
    close: async () => {
      for (const timer of waiting) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: ReceivedWebhook = {
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      receiver.received.push(entry);
      const answer = (status: number) => {
        entry.answeredAt = Date.now();
        response.writeHead(status).end();
      };
      if (receiver.mode === 'down') answer(503);
      else if (receiver.mode === 'ok') answer(204);
      else {
        const timer = setTimeout(() => {
          waiting.delete(timer);
          answer(200);
        }, receiver.slowMs);
        waiting.add(timer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
