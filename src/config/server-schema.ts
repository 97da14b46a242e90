/**
 * The `server` section of the config (config/schema.ts): the public listener, its request and stream
 * bounds, the drain, links, proxies, the access log and the operations surface (token and listener).
 */
import { z } from 'zod';

export const serverSchema = z
  .strictObject({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    /** Largest JSON request body, bytes. */
    bodyLimitBytes: z
      .number()
      .int()
      .positive()
      .default(10 * 1024 * 1024),
    /** Largest uploaded file, bytes (SPEC: batch input up to 100 MB). */
    uploadLimitBytes: z
      .number()
      .int()
      .positive()
      .default(100 * 1024 * 1024),
    /** How long a graceful shutdown waits for in-flight requests, milliseconds. */
    shutdownGraceMs: z.number().int().nonnegative().default(10_000),
    /** Seconds between SSE keep-alive comments while the upstream is silent. */
    keepAliveSeconds: z.number().positive().default(15),
    /** Longest wait for a request's complete headers, milliseconds; then 408 and the connection is closed. */
    headersTimeoutMs: z.number().int().positive().default(30_000),
    /** Longest silence while a request body is being received, milliseconds; then 408 and the connection is closed. */
    bodyIdleTimeoutMs: z.number().int().positive().default(30_000),
    /**
     * Minimum body rate, as Apache's mod_reqtimeout (`body=20,MinRate=500`): a request body gets
     * `bodyTimeoutMs` to arrive, extended by one second per `bodyMinBytesPerSecond` bytes received;
     * past that, 408 and the connection is closed. Milliseconds.
     */
    bodyTimeoutMs: z.number().int().positive().default(20_000),
    /** Bytes per second a request body must average beyond `bodyTimeoutMs` (each such many bytes buys one more second). */
    bodyMinBytesPerSecond: z.number().int().positive().default(500),
    /**
     * Minimum send rate for answers other than SSE streams (downloads, large JSON): an answer gets
     * `sendTimeoutMs` to go out, extended by one second per `sendMinBytesPerSecond` bytes the client
     * took; and it is cut when the client takes nothing for `sendIdleTimeoutMs`. Then the connection
     * is closed (the status is already out). Milliseconds.
     */
    sendTimeoutMs: z.number().int().positive().default(20_000),
    sendMinBytesPerSecond: z.number().int().positive().default(1024),
    sendIdleTimeoutMs: z.number().int().positive().default(30_000),
    /** Open connections the public listener holds at once; more are closed on arrival. 0: no cap. */
    maxConnections: z.number().int().nonnegative().default(10_000),
    /**
     * Open connections one client address holds at once (the TCP peer: behind a proxy, the proxy);
     * more are closed on arrival. 0: no cap. 1,024 by default: far above what one honest client holds
     * (an SDK pools a few dozen), and still a small share of `maxConnections`; 256 closed connections
     * of 1,000 concurrent requests from one host spread over three instances (333 each).
     */
    maxConnectionsPerAddress: z.number().int().nonnegative().default(1024),
    /** Longest time to receive a whole request (headers and body), milliseconds; bounds a body that trickles in. */
    requestTimeoutMs: z.number().int().positive().default(300_000),
    /**
     * Longest time an SSE stream waits for a client that stopped reading (its socket buffer full),
     * milliseconds; then the stream is closed and its upstream request aborted.
     */
    streamStallTimeoutMs: z.number().int().positive().default(30_000),
    /**
     * On SIGTERM, seconds during which `/readyz` already answers 503 while everything else is still
     * served, so a load balancer stops sending new requests before the instance stops accepting.
     */
    drainDelaySeconds: z.number().nonnegative().default(0),
    /**
     * Scheme, host, port (and optional path prefix) clients reach this service at, e.g.
     * `https://ai.example.com`: the origin of signed links. Without it, links use the forwarded
     * headers when `trustProxy` is set, else the address the request arrived at (never `Host`).
     */
    publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * Believe `X-Forwarded-For/-Proto/-Host` from a proxy (Fastify's `trustProxy`): `true` (any
     * peer), a hop count, or addresses/CIDRs of the proxies (`"10.0.0.0/8,127.0.0.1"`).
     */
    trustProxy: z.union([z.boolean(), z.number().int().nonnegative(), z.string().min(1), z.array(z.string().min(1))]).default(false),
    /** One `info` line per answered request (env `LOG_ACCESS=off` turns it off). */
    accessLog: z.boolean().default(true),
    /**
     * When set, `/metrics` and the detail of `/readyz` answer only to `Authorization: Bearer <token>`
     * (env `OPERATIONS_TOKEN`); `/readyz`'s status code stays public for balancers. At least 16 characters.
     */
    operationsToken: z
      .string()
      .min(16, 'operationsToken (OPERATIONS_TOKEN) must be at least 16 characters; generate one with `openssl rand -hex 32`.')
      .optional(),
    /**
     * A second listener for `/metrics`, `/readyz` with its detail and `/healthz` (env `OPERATIONS_PORT`),
     * to keep them off the public one: there `/metrics` then answers 404 and `/readyz` only its status
     * code and `{status}` (what a balancer needs), whatever the token. With `operationsToken` set too,
     * the operations listener asks for it as well. Unset: one listener serves everything.
     */
    operationsPort: z.number().int().min(0).max(65535).optional(),
    /** The operations listener's address (env `OPERATIONS_HOST`); default: `host`. */
    operationsHost: z.string().min(1).optional(),
  })
  .prefault({});
