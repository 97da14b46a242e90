/**
 * One circuit breaker per shared dependency (database, Redis, object store): while a dependency is
 * known down, callers are refused in microseconds instead of each waiting out a timeout, and a
 * background probe notices the heal.
 *
 * States: `closed` (calls go through; `failureThreshold` consecutive dependency failures open it),
 * `open` (calls are refused at once with `DependencyUnavailableError`; every `probeIntervalMs` the
 * probe runs), `half-open` (a probe is running; calls are still refused). A successful probe, or any
 * successful call, closes it again. Only failures that say the dependency is unreachable count
 * (connection refused or reset, timeouts): a constraint violation or a bad query is an answer.
 *
 * Logging is one line per state change, never one per request: `down` when the breaker opens (with
 * the error), `back` when it closes (with how long it was down and how many calls it refused).
 */
import { ServiceError } from './service-error.ts';

export type BreakerState = 'closed' | 'open' | 'half-open';

/** The part of a pino logger a breaker uses. */
export interface BreakerLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface CircuitBreakerOptions {
  /** The dependency's name in logs, metrics and errors: `database`, `redis`, `files`. */
  name: string;
  /** What clients are told the dependency is (`the database`, `the rate-limit store`...). */
  description?: string;
  /** Consecutive dependency failures that open the breaker. Default 2. */
  failureThreshold?: number;
  /** Milliseconds between probes while open. Default 500. */
  probeIntervalMs?: number;
  /** Checks the dependency (resolves when reachable); without one, the breaker half-opens for the next call. */
  probe?: () => Promise<unknown>;
  logger?: BreakerLogger;
  /** Seconds a refused client is told to wait (`retry-after`). Default 1. */
  retryAfterSeconds?: number;
}

/**
 * SPEC 500 `service_unavailable` (the SPEC's status for that code), with `retry-after`: what a client
 * gets while a dependency it needs is down. `dependency` names it for logs and metrics.
 */
export class DependencyUnavailableError extends ServiceError {
  readonly dependency: string;

  constructor(dependency: string, description: string, retryAfterSeconds: number, cause?: unknown) {
    super({
      status: 500,
      type: 'server_error',
      code: 'service_unavailable',
      message: `${description} is unavailable; try again shortly.`,
      headers: { 'retry-after': String(retryAfterSeconds) },
      ...(cause === undefined ? {} : { cause }),
    });
    this.dependency = dependency;
  }
}

/** Error codes of Node sockets and drivers that mean "could not reach it", not "it said no". */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'ERR_SOCKET_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'TimeoutError',
  'RequestTimeout',
  // Postgres SQLSTATEs: admin shutdown, crash shutdown, cannot connect now, connection exceptions,
  // query canceled (statement_timeout), idle-in-transaction timeout.
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57014',
  '25P03',
]);

const UNREACHABLE_MESSAGES =
  /timed? ?out|timeout|connection terminated|Connection is closed|Stream isn't writeable|connect ECONNREFUSED|socket hang up|Client has encountered a connection error|the database system is (starting up|shutting down)|ECONNRESET|ECONNREFUSED|EPIPE|MaxRetriesPerRequest|Reached the max retries/i;

/** True when an error (or its cause chain) says the dependency could not be reached or did not answer in time. */
export function isUnreachableError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (current instanceof DependencyUnavailableError) return true;
    if (typeof current !== 'object') return false;
    if (current instanceof ServiceError) {
      // A coded answer (an upstream's timeout, a 4xx) is not a dependency being away; only Switchyard's
      // own `service_unavailable` is looked through, to the cause it wraps.
      if (current.code !== 'service_unavailable') return false;
      current = current.cause;
      continue;
    }
    const record = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof record.code === 'string' && UNREACHABLE_CODES.has(record.code)) return true;
    if (typeof record.name === 'string' && UNREACHABLE_CODES.has(record.name)) return true;
    if (typeof record.message === 'string' && UNREACHABLE_MESSAGES.test(record.message)) return true;
    if (Array.isArray(record.errors) && record.errors.some((inner) => isUnreachableError(inner))) return true;
    current = record.cause;
  }
  return false;
}

const STATE_NUMBER: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

export class CircuitBreaker {
  readonly name: string;
  private readonly description: string;
  private readonly failureThreshold: number;
  private readonly probeIntervalMs: number;
  private readonly probe: (() => Promise<unknown>) | undefined;
  private readonly logger: BreakerLogger | undefined;
  private readonly retryAfterSeconds: number;
  private currentState: BreakerState = 'closed';
  private consecutiveFailures = 0;
  private timer: NodeJS.Timeout | undefined;
  private openedAtMs = 0;
  /** Calls refused since the breaker opened (reported when it closes). */
  private refusedSinceOpen = 0;
  /** Calls that failed on the dependency since the breaker opened or before it did. */
  private failedSinceOpen = 0;
  /** Dependency failures counted since start (Prometheus counter). */
  failuresTotal = 0;
  /** Calls refused without trying since start. */
  refusedTotal = 0;
  private closed = false;
  /** Called (synchronously) each time the breaker opens: e.g. the database discards its idle connections. */
  private readonly openListeners: Array<() => void> = [];

  constructor(options: CircuitBreakerOptions) {
    this.name = options.name;
    this.description = options.description ?? `The ${options.name}`;
    this.failureThreshold = options.failureThreshold ?? 2;
    this.probeIntervalMs = options.probeIntervalMs ?? 500;
    this.probe = options.probe;
    this.logger = options.logger;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }

  get state(): BreakerState {
    return this.currentState;
  }

  /** 0 closed, 1 half-open, 2 open (the Prometheus gauge). */
  get stateNumber(): number {
    return STATE_NUMBER[this.currentState];
  }

  get isOpen(): boolean {
    return this.currentState !== 'closed';
  }

  /** The error a refused call gets. */
  unavailable(cause?: unknown): DependencyUnavailableError {
    return new DependencyUnavailableError(this.name, this.description, this.retryAfterSeconds, cause);
  }

  /** Throws the fast refusal when the breaker is open; counts it. */
  check(): void {
    if (this.currentState === 'closed') return;
    this.refusedSinceOpen++;
    this.refusedTotal++;
    throw this.unavailable();
  }

  /** Runs `call` through the breaker: refused at once while open; its outcome counts. */
  async run<T>(call: () => Promise<T>): Promise<T> {
    this.check();
    try {
      const result = await call();
      this.recordSuccess();
      return result;
    } catch (error) {
      if (this.recordFailure(error)) throw this.unavailable(error);
      throw error;
    }
  }

  /**
   * Runs `call` unless the breaker is open; when the breaker is open, or `call` fails because the
   * dependency is unreachable, answers with `fallback` instead (the degraded path of a store that has
   * one). Any other failure is rethrown.
   */
  async orElse<T>(call: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (this.currentState === 'closed') {
      try {
        const result = await call();
        this.recordSuccess();
        return result;
      } catch (error) {
        if (!this.recordFailure(error)) throw error;
      }
    }
    return fallback();
  }

  recordSuccess(): void {
    this.consecutiveFailures = 0;
    if (this.currentState !== 'closed') this.close();
  }

  /**
   * Counts `error` when it says the dependency is unreachable; returns whether it did. Opens the
   * breaker after `failureThreshold` such failures in a row.
   */
  recordFailure(error: unknown): boolean {
    if (!isUnreachableError(error)) return false;
    this.failuresTotal++;
    this.failedSinceOpen++;
    this.consecutiveFailures++;
    if (this.currentState === 'closed' && this.consecutiveFailures >= this.failureThreshold) this.open(error);
    return true;
  }

  /** Registers `listener`, called each time the breaker opens (after the `down` line). */
  onOpen(listener: () => void): void {
    this.openListeners.push(listener);
  }

  /** Stops the probe timer (shutdown). */
  stop(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private open(error: unknown): void {
    this.currentState = 'open';
    this.openedAtMs = Date.now();
    this.refusedSinceOpen = 0;
    this.logger?.warn(
      { dependency: this.name, err: error, failures: this.failedSinceOpen },
      `${this.name} is down: refusing calls that need it at once until a probe succeeds`,
    );
    for (const listener of this.openListeners) listener();
    this.scheduleProbe();
  }

  private close(): void {
    const downForMs = Date.now() - this.openedAtMs;
    this.currentState = 'closed';
    this.consecutiveFailures = 0;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.logger?.info(
      { dependency: this.name, downForMs, refused: this.refusedSinceOpen, failed: this.failedSinceOpen },
      `${this.name} is back after ${(downForMs / 1000).toFixed(1)} s (${this.refusedSinceOpen} calls refused, ${this.failedSinceOpen} failed)`,
    );
    this.refusedSinceOpen = 0;
    this.failedSinceOpen = 0;
  }

  private scheduleProbe(): void {
    if (this.closed || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runProbe();
    }, this.probeIntervalMs);
    this.timer.unref();
  }

  private async runProbe(): Promise<void> {
    if (this.closed || this.currentState === 'closed') return;
    if (this.probe === undefined) {
      // No probe: let the next call through as the probe.
      this.currentState = 'closed';
      this.consecutiveFailures = this.failureThreshold - 1;
      return;
    }
    this.currentState = 'half-open';
    try {
      await this.probe();
      // A call started before the breaker opened may have succeeded while the probe ran, and closed it
      // already (and said so): one "back" line per outage.
      if (this.state !== 'closed') this.close();
    } catch {
      if (this.state !== 'half-open') return;
      this.currentState = 'open';
      this.scheduleProbe();
    }
  }
}

/** The breakers of one process, by dependency: `/readyz` reports them and `/metrics` exports them. */
export class DependencyBreakers {
  private readonly breakers = new Map<string, CircuitBreaker>();

  add(breaker: CircuitBreaker): CircuitBreaker {
    this.breakers.set(breaker.name, breaker);
    return breaker;
  }

  get(name: string): CircuitBreaker | undefined {
    return this.breakers.get(name);
  }

  all(): CircuitBreaker[] {
    return [...this.breakers.values()];
  }

  stop(): void {
    for (const breaker of this.breakers.values()) breaker.stop();
  }
}
