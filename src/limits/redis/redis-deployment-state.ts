/**
 * Redis deployment state: instances sharing one Redis share cooldowns, minute usage, in-flight
 * counts and latency averages of every deployment. `read` is one MGET, `acquire` one script (EVALSHA,
 * EVAL on NOSCRIPT); the reports are scripts sent without waiting for their answer.
 *
 * Keys: `<prefix>{<model>}:<deployment>:cool|inflight|latency|rpm:<minute>|tpm:<minute>`, ids
 * URI-encoded, prefix default `switchyard:routing:`. Cooldowns expire when they end, minute counters
 * one second after their minute, in-flight counters and latency averages after an hour without
 * traffic (a crashed instance's in-flight requests are forgotten then).
 */
import type { Redis } from 'ioredis';
import { serverError } from '../../core/service-error.ts';
import { systemClock, type Clock } from '../clock.ts';
import {
  LATENCY_SMOOTHING,
  minuteOf,
  type Acquired,
  type DeploymentLimits,
  type DeploymentRef,
  type DeploymentState,
  type DeploymentStateStore,
} from '../deployment-state.ts';
import { ACQUIRE_SCRIPT, CORRECT_TOKENS_SCRIPT, COOL_DOWN_SCRIPT, OBSERVE_LATENCY_SCRIPT, RELEASE_SCRIPT } from './deployment-scripts.ts';
import { evalScript, luaScript, type LuaScript } from './lua-script.ts';
import { commandBoundOf, openRedisConnection, type RedisCommandBound, type RedisConnectionOptions } from './redis-connection.ts';

export interface RedisDeploymentStateOptions {
  /** A `redis://` URL (the store then owns and closes the connection) or an ioredis client to share. */
  redis: string | Redis;
  /** Default `switchyard:routing:`. */
  keyPrefix?: string;
  clock?: Clock;
  /** Told about failed reports that are not the store being unreachable (pino-compatible). */
  logger?: { warn(details: object, message: string): void };
  /** Bounds and error hook of a connection the store opens from a URL. */
  connection?: RedisConnectionOptions;
  /** Told about every failed report (fire-and-forget writes): feed a circuit breaker. */
  onReportError?: (error: unknown) => void;
}

/** Life of in-flight counters and latency averages without traffic, ms. */
const IDLE_TTL_MS = 3_600_000;
/** Extra life of a minute counter after its minute, ms (a late correction still finds it). */
const EXPIRY_SLACK_MS = 1_000;

const acquireScript = luaScript(ACQUIRE_SCRIPT);
const releaseScript = luaScript(RELEASE_SCRIPT);
const correctTokensScript = luaScript(CORRECT_TOKENS_SCRIPT);
const coolDownScript = luaScript(COOL_DOWN_SCRIPT);
const observeLatencyScript = luaScript(OBSERVE_LATENCY_SCRIPT);

export class RedisDeploymentState implements DeploymentStateStore {
  private readonly redis: Redis;
  /** Every command waits at most while Redis stays silent for the connection's bound (redis-connection.ts). */
  private readonly bound: RedisCommandBound;
  private readonly ownsConnection: boolean;
  private readonly keyPrefix: string;
  private readonly clock: Clock;
  private readonly logger: RedisDeploymentStateOptions['logger'];
  private readonly onReportError: RedisDeploymentStateOptions['onReportError'];
  /** Key stem per ref, built once. */
  private readonly stems = new WeakMap<DeploymentRef, string>();

  constructor(options: RedisDeploymentStateOptions) {
    this.logger = options.logger;
    this.onReportError = options.onReportError;
    if (typeof options.redis === 'string') {
      this.redis = openRedisConnection(options.redis, options.connection);
      this.ownsConnection = true;
    } else {
      this.redis = options.redis;
      this.ownsConnection = false;
    }
    this.bound = commandBoundOf(this.redis);
    this.keyPrefix = options.keyPrefix ?? 'switchyard:routing:';
    this.clock = options.clock ?? systemClock;
  }

  async read(refs: readonly DeploymentRef[]): Promise<DeploymentState[]> {
    const minute = minuteOf(this.clock.now());
    const keys: string[] = [];
    for (const ref of refs) {
      const stem = this.stem(ref);
      keys.push(`${stem}:cool`, `${stem}:inflight`, `${stem}:latency`, `${stem}:rpm:${minute}`, `${stem}:tpm:${minute}`);
    }
    let values: Array<string | null>;
    try {
      values = await this.bound.run(() => this.redis.mget(keys));
    } catch (error) {
      throw unavailable(error);
    }
    const number = (value: string | null | undefined): number => (value === null || value === undefined ? 0 : Number(value));
    return refs.map((_, index) => {
      const at = index * 5;
      const latency = values[at + 2];
      return {
        coolingUntilMs: number(values[at]),
        inFlight: Math.max(0, number(values[at + 1])),
        latencyMs: latency === null || latency === undefined ? null : Number(latency),
        requests: number(values[at + 3]),
        tokens: number(values[at + 4]),
      };
    });
  }

  async acquire(ref: DeploymentRef, limits: DeploymentLimits, tokens: number): Promise<Acquired | null> {
    const nowMs = this.clock.now();
    const minute = minuteOf(nowMs);
    const stem = this.stem(ref);
    const reply = await this.run(
      acquireScript,
      [`${stem}:rpm:${minute}`, `${stem}:tpm:${minute}`, `${stem}:inflight`],
      [limits.requestsPerMinute, limits.tokensPerMinute, tokens, (minute + 1) * 60_000 - nowMs + EXPIRY_SLACK_MS, IDLE_TTL_MS],
    );
    if (!Array.isArray(reply) || typeof reply[0] !== 'number')
      throw unavailable(new Error(`Unexpected reply from the acquire script: ${JSON.stringify(reply)}`));
    return reply[0] === 1 ? { minute } : null;
  }

  release(ref: DeploymentRef): void {
    this.report(releaseScript, [`${this.stem(ref)}:inflight`], [IDLE_TTL_MS]);
  }

  correctTokens(ref: DeploymentRef, minute: number, delta: number): void {
    if (delta !== 0) this.report(correctTokensScript, [`${this.stem(ref)}:tpm:${minute}`], [delta]);
  }

  coolDown(ref: DeploymentRef, untilMs: number): void {
    const ttl = Math.ceil(untilMs - this.clock.now());
    if (ttl > 0) this.report(coolDownScript, [`${this.stem(ref)}:cool`], [untilMs, ttl]);
  }

  observeLatency(ref: DeploymentRef, latencyMs: number): void {
    this.report(observeLatencyScript, [`${this.stem(ref)}:latency`], [latencyMs, LATENCY_SMOOTHING, IDLE_TTL_MS]);
  }

  async close(): Promise<void> {
    if (!this.ownsConnection) return;
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }

  private stem(ref: DeploymentRef): string {
    let stem = this.stems.get(ref);
    if (stem === undefined) {
      stem = `${this.keyPrefix}{${encodeURIComponent(ref.model)}}:${encodeURIComponent(ref.deployment)}`;
      this.stems.set(ref, stem);
    }
    return stem;
  }

  private report(script: LuaScript, keys: string[], args: number[]): void {
    this.run(script, keys, args).catch((error: unknown) => {
      // An unreachable store is reported once by its circuit breaker, not once per report.
      if (this.onReportError !== undefined) this.onReportError(error);
      else this.logger?.warn({ err: error, keys }, 'deployment state: a report could not be written');
    });
  }

  private async run(script: LuaScript, keys: string[], args: number[]): Promise<unknown> {
    try {
      return await this.bound.run(() => evalScript(this.redis, script, keys, args));
    } catch (error) {
      throw unavailable(error);
    }
  }
}

function unavailable(cause: unknown) {
  return serverError('service_unavailable', 'The routing state store is unavailable; try again shortly.', cause);
}
