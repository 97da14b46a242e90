/**
 * What the edge attaches to each Fastify request and route, declared once for the type checker.
 */
import type { AuthContext } from '../accounts/authenticator.ts';
import type { CancellationSource } from '../core/cancellation.ts';
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
   * How the rate limiter sees the route, for readers (the edge admits nothing): `request` (default for
   * keyed routes) means the route's use case admits one request (services/metering/admitted-request.ts);
   * `tokens`, that it admits its tokens (`metered()`, `Admission.start`); `none`, that it skips limits
   * (key status must answer even when limits are exhausted). Either way the use case returns its
   * admission with its answer (`reply.sendAnswer`).
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
  }
  interface FastifyContextConfig {
    switchyard?: SwitchyardRouteConfig;
  }
}

export {};

import type { Answer } from '../services/answer.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborted when the client goes away before the answer is complete. Created on first use. */
    clientCancellation(): CancellationSource;
    /** `clientCancellation()` as a real AbortSignal, for APIs that take one. Created on first use. */
    clientSignal(): AbortSignal;
  }
  interface FastifyReply {
    /** Sends a JSON success body with `_metadata` added (routes without an admission: key status, embedders' routes). */
    sendData(body: Record<string, unknown>, statusCode?: number): FastifyReply | Promise<FastifyReply>;
    /**
     * Sends a use case's answer: its headers, its JSON body with `_metadata` (from its admission's
     * figures), its events through the single SSE writer (resolves when the stream ends) or a file's
     * raw bytes.
     */
    sendAnswer(answer: Answer): FastifyReply | Promise<void> | Promise<FastifyReply>;
  }
}
