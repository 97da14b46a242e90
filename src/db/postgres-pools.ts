/**
 * Postgres connections as the database uses them (issue 39): two pools, one probe.
 *
 * - The **request pool** serves what a client waits for (file metadata, keys, dashboard reads): the
 *   wait for a connection and every statement are bounded by `requestTimeoutMs` (default 2 s), so a
 *   frozen server refuses request-path work within that bound and the breaker then refuses the rest at
 *   once.
 * - The **background pool** serves work nobody waits on (migrations, the usage ledger's writes and
 *   rollups, retention, the batch worker, alerts, heartbeats), bounded by the longer `statementTimeoutMs`.
 * - The **probe** opens a fresh connection of its own each time (never a pooled one, which may lead to
 *   the old server of a failover and cost a whole statement bound), runs `SELECT 1`, and closes it.
 *
 * When the breaker opens, and whenever a query fails as unreachable, the pool discards its idle
 * connections (it is replaced by a fresh pool; clients checked out finish or fail on the old one), so
 * the next calls open new connections to whatever server now answers. A client whose query failed as
 * unreachable is destroyed on release, not put back. Handing out a pooled client is not a success for
 * the breaker (only an answer is), so stranded connections failing one after another open it. TCP keepalive starts after `KEEPALIVE_INITIAL_DELAY_MS`, not the kernel's
 * two hours, so a connection to a vanished server is noticed within seconds even when idle.
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pgModule from 'pg';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { isUnreachableError, type CircuitBreaker } from '../core/circuit-breaker.ts';

/** Bounds on every wait for Postgres (config `dependencies`). */
export interface PostgresTimeouts {
  /** Longest wait for a new connection, ms. */
  connectTimeoutMs: number;
  /** Background work: server `statement_timeout`, ms; the client gives up `+1 s` later on a server that does not answer. */
  statementTimeoutMs: number;
  /** Server `idle_in_transaction_session_timeout`, ms. */
  idleInTransactionTimeoutMs: number;
  /**
   * Request-path work: the longest wait for a pooled connection and for each statement, ms (the client
   * gives up 250 ms after the server's `statement_timeout`). Default `DEFAULT_REQUEST_TIMEOUT_MS`.
   */
  requestTimeoutMs?: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 2_000;

export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = {
  connectTimeoutMs: 2_000,
  statementTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 30_000,
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
};

/** TCP keepalive's first probe after this much idleness (libuv then probes every second, 10 times). */
export const KEEPALIVE_INITIAL_DELAY_MS = 5_000;

/** How far past the server's `statement_timeout` the client gives up on a request-path statement. */
const REQUEST_CLIENT_SLACK_MS = 250;

export type PoolRole = 'request' | 'background';

/** pg pool settings that bound every wait and keep dead connections from lingering. */
export function boundedPoolConfig(url: string, size: number, timeouts: PostgresTimeouts, role: PoolRole = 'background'): PoolConfig {
  const requestTimeoutMs = timeouts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const statementMs = role === 'request' ? Math.min(requestTimeoutMs, timeouts.statementTimeoutMs) : timeouts.statementTimeoutMs;
  return {
    connectionString: url,
    max: size,
    connectionTimeoutMillis: role === 'request' ? Math.min(timeouts.connectTimeoutMs, requestTimeoutMs) : timeouts.connectTimeoutMs,
    statement_timeout: statementMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
    // A frozen server never answers, so the server-side timeout never fires: the client's does.
    query_timeout: statementMs + (role === 'request' ? REQUEST_CLIENT_SLACK_MS : 1_000),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    idleTimeoutMillis: 30_000,
  };
}

type Pg = typeof pgModule;

let loadedPg: Promise<Pg> | undefined;

/** pg, imported on first use: a SQLite deployment never pays for loading it. */
export function loadPg(): Promise<Pg> {
  return (loadedPg ??= import('pg').then(({ default: pg }) => {
    // BIGINT (OID 20) columns hold millisecond timestamps and counters, all far below 2^53.
    pg.types.setTypeParser(20, (value: string) => Number(value));
    return pg;
  }));
}

/**
 * A pg pool that can be replaced by a fresh one (`discardIdle`): the old pool's idle connections are
 * closed at once, its checked-out ones when released.
 */
export class ReplaceablePool {
  private pool: Pool;
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private readonly pg: Pg,
    private readonly config: PoolConfig,
    private readonly breaker: CircuitBreaker | undefined,
  ) {
    this.pool = this.create();
  }

  get current(): Pool {
    return this.pool;
  }

  discardIdle(): void {
    const old = this.pool;
    if (old.idleCount === 0) return;
    this.pool = this.create();
    const ending = old.end().catch(() => undefined);
    this.retiring.add(ending);
    void ending.then(() => this.retiring.delete(ending));
  }

  async end(): Promise<void> {
    await Promise.all([this.pool.end(), ...this.retiring]);
  }

  private create(): Pool {
    const pool = new this.pg.Pool(this.config);
    const breaker = this.breaker;
    // node-postgres: "if a pool emits an error event and no listeners are added node will emit an
    // uncaught error". An idle connection the server terminated (restart, failover) is dropped by the
    // pool and replaced on the next use; the breaker counts it (and logs the state change once).
    pool.on('error', (error: Error) => breaker?.recordFailure(error));
    // The pool's listener covers idle clients only: a client checked out when the server ends its
    // connection emits 'error' on itself, which without a listener ends the process too. Its query
    // fails (and is counted) on its own; the pool discards the client when it is released.
    pool.on('connect', (client) => client.on('error', (error: Error) => breaker?.recordFailure(error)));
    return pool;
  }
}

/**
 * The pool as Kysely sees it, behind the database's circuit breaker (when there is one): while the
 * database is known to be unreachable a connection is refused at once (500 `service_unavailable`,
 * `retry-after`) instead of each request waiting out a bound; every query's outcome feeds the breaker.
 */
export function kyselyPool(pool: ReplaceablePool, breaker: CircuitBreaker | undefined): PostgresPool {
  const observe = <T>(promise: Promise<T>, onUnreachable?: () => void, proves = true): Promise<T> =>
    promise.then(
      (value) => {
        if (proves) breaker?.recordSuccess();
        return value;
      },
      (error: unknown) => {
        if (isUnreachableError(error)) onUnreachable?.();
        if (breaker?.recordFailure(error) === true) throw breaker.unavailable(error);
        throw error;
      },
    );
  return {
    async connect(): Promise<PostgresPoolClient> {
      breaker?.check();
      // Handing out an idle pooled client proves nothing about the server: only a query's answer does.
      const client: PoolClient = await observe(pool.current.connect(), undefined, false);
      // A client whose query timed out or lost its server is destroyed on release, never reused; the
      // pool's other idle clients are discarded too, as they most likely lead to the same lost server
      // (a failover strands them all: each would cost a request its whole bound).
      let broken = false;
      const onUnreachable = (): void => {
        broken = true;
        pool.discardIdle();
      };
      return {
        query: ((...args: unknown[]) => {
          const result = (client.query as (...a: unknown[]) => unknown)(...args);
          return result instanceof Promise ? observe(result, onUnreachable) : result;
        }) as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

/** Resolves when a fresh connection (never a pooled one) runs `SELECT 1` within the bounds; always closes it. */
export async function probePostgres(url: string, timeouts: PostgresTimeouts): Promise<void> {
  const pg = await loadPg();
  const boundMs = Math.min(timeouts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, timeouts.statementTimeoutMs);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    query_timeout: boundMs,
    statement_timeout: boundMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
  });
  // A probe whose server vanishes mid-way must not end the process ('error' without a listener).
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    // Not awaited: on a socket that never opened, `end` may wait for an 'end' event that never comes.
    void client.end().catch(() => undefined);
  }
}
