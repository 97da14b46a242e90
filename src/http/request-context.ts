/**
 * What the edge attaches to each Fastify request and route, declared once for the type checker.
 */
import type { AuthContext } from '../accounts/authenticator.ts';
import type { CancellationSource } from '../core/cancellation.ts';
import type { DecodeOptions } from '../core/generation-format.ts';
import type { Permission } from '../config/index.ts';
import type { GenerationFormat } from '../core/generation-format.ts';
import type { AccountUsageSnapshot } from '../services/account-usage.ts';

/** Per-route settings read by the edge's hooks. */
export interface SwitchyardRouteConfig {
  /**
   * Permission the caller's key needs; `authenticated` asks only for a valid key (key status);
   * `null` marks a public route (health, metrics, OpenAPI).
   */
  permission: Permission | 'authenticated' | null;
  /**
   * How the rate limiter sees the route: `request` (default for keyed routes) counts one request
   * before the handler; `tokens` leaves admission to the handler, which calls `request.admit()` with
   * its token estimate; `none` skips limits (key status must answer even when limits are exhausted).
   */
  limits?: 'request' | 'tokens' | 'none';
  /** One line for the OpenAPI description. */
  summary?: string;
  /** The path as OpenAPI shows it, when the route pattern differs (wildcards). */
  openapiPath?: string;
  /** The client format of a generation route: its clients' error body wraps the SPEC envelope. */
  format?: Pick<GenerationFormat<unknown>, 'wrapErrorEnvelope'>;
  /** Key-status style metadata: processing_time as an integer. */
  integerProcessingTime?: boolean;
}

/** What the edge reads of a request's route, once per request (see `routeFacts`). */
export interface RouteFacts {
  /** The route pattern (undefined for the not-found handler). */
  url: string | undefined;
  settings: SwitchyardRouteConfig | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The route's pattern and settings, once read (`routeFacts` in http/route-facts.ts). */
    routeFactsCache: RouteFacts | undefined;
    /** Set by the auth hook on every non-public route. */
    auth: AuthContext | undefined;
    /** process.hrtime.bigint() when the request arrived. */
    startedAt: bigint;
    /** Usage figures already known for this request (e.g. from the rate limiter), saving a read. */
    usageSnapshot: AccountUsageSnapshot | undefined;
    /** Extra headers to add to the answer (rate-limit headers, warnings). */
    extraHeaders: Record<string, string> | undefined;
    /** What the request decoders take beside the body (config `requestValidation`). */
    readonly decodeOptions: DecodeOptions;
  }
  interface FastifyContextConfig {
    switchyard?: SwitchyardRouteConfig;
  }
}

export {};

import type { SseEvent } from '../core/sse-event.ts';
import type { Admission } from '../services/metering/metering-service.ts';

/** Options of `reply.sendEvents`. */
export interface SendEventsOptions {
  /** Sent while the source is silent for `keepAliveSeconds`; default an SSE comment (`: keep-alive`). */
  keepAlive?: SseEvent;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborted when the client goes away before the answer is complete. Created on first use. */
    clientCancellation(): CancellationSource;
    /** `clientCancellation()` as a real AbortSignal, for APIs that take one. Created on first use. */
    clientSignal(): AbortSignal;
    /**
     * Admits this request against the caller's limits reserving `estimatedTokens` (throws the SPEC 429),
     * adds the rate-limit headers to the answer and returns the admission to settle with real usage.
     */
    admit(estimatedTokens: number): Promise<Admission>;
    /** The admission of this request, once admitted. */
    admission: Admission | undefined;
  }
  interface FastifyReply {
    /** Sends a JSON success body with `_metadata` added. */
    sendData(body: Record<string, unknown>, statusCode?: number): FastifyReply | Promise<FastifyReply>;
    /** Streams server-sent events through the single SSE writer. Resolves when the stream ends. */
    sendEvents(events: AsyncIterable<SseEvent>, options?: SendEventsOptions): Promise<void>;
  }
}
