/**
 * The access log: one `info` line per answered request (method, route pattern, status, milliseconds,
 * model, tokens, key id, request id), written through the process logger once the answer has ended.
 * Config `server.accessLog` (env `LOG_ACCESS=off`) silences it; with a log level above `info` (`LOG_LEVEL=warn`)
 * the hooks are not installed at all (runtime/build-services.ts).
 *
 * Cheap on the hot path: no per-request child logger (the line is written by the root logger with the
 * request id as a field), the route pattern rather than the URL (no query strings, so no signed-link
 * signatures, and a bounded set of values), and the model and tokens handed over by the usage ledger's
 * observer through a map of the requests in flight, so no request waits for anything.
 * Successful probes (`/healthz`, `/readyz`) are not logged: a balancer sends them every few seconds.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';
import { routeFacts } from './route-facts.ts';

/** What the ledger knew of a metered request, for its access line. */
interface MeteredFacts {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

const PROBES = new Set(['/healthz', '/readyz']);
/** Bound of the in-flight map, should a request ever end without its onResponse hook (oldest dropped first). */
const MOST_IN_FLIGHT = 100_000;

export class AccessLog {
  /** Requests between arrival and the end of their answer, by request id. */
  private readonly inFlight = new Map<string, { metered: MeteredFacts | undefined }>();

  constructor(private readonly logger: Pick<FastifyBaseLogger, 'info'>) {}

  /** The usage ledger's observer: a metered request's model and tokens, kept until its line is written. */
  usageRecorded(record: Pick<LedgerRecord, 'requestId' | 'model' | 'inputTokens' | 'outputTokens'>): void {
    const entry = this.inFlight.get(record.requestId);
    if (entry !== undefined) entry.metered = { model: record.model, inputTokens: record.inputTokens, outputTokens: record.outputTokens };
  }

  /** Adds the hooks that note each request's arrival and write its line when the answer has ended. */
  install(app: FastifyInstance): void {
    app.addHook('onRequest', (request, _reply, done) => {
      if (this.inFlight.size >= MOST_IN_FLIGHT) this.inFlight.delete(this.inFlight.keys().next().value!);
      this.inFlight.set(request.id, { metered: undefined });
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const entry = this.inFlight.get(request.id);
      this.inFlight.delete(request.id);
      const route = routeFacts(request).url;
      if (!(reply.statusCode < 400 && route !== undefined && PROBES.has(route)))
        this.write(request, route, reply.statusCode, reply.elapsedTime, entry?.metered);
      done();
    });
  }

  private write(
    request: FastifyRequest,
    route: string | undefined,
    status: number,
    elapsedMs: number,
    metered: MeteredFacts | undefined,
  ): void {
    this.logger.info(
      {
        request_id: request.id,
        method: request.method,
        // The pattern, not the URL: for a request no route matched, the path without its query.
        route: route ?? `unmatched ${(request.url.split('?')[0] ?? '').slice(0, 200)}`,
        status,
        ms: Math.round(elapsedMs * 10) / 10,
        model: metered?.model ?? null,
        input_tokens: metered?.inputTokens ?? null,
        output_tokens: metered?.outputTokens ?? null,
        key_id: request.auth?.keyId ?? null,
      },
      'access',
    );
  }
}
