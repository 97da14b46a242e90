/**
 * The chaos suite's world: a private Postgres, a private Redis, s3rver, the slow mock upstream and two
 * Switchyard instances sharing them (FILES_STORE on the s3rver), with a Production-tier key. Everything
 * is torn down by `close()`, and killed by a process `exit` handler should the test runner end first,
 * so that no private server outlives the run. Never touches the shared Postgres (5432) or Redis (6379).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../run-cli.ts';
import { ChaosUpstream } from './chaos-upstream.ts';
import { Fleet } from './fleet.ts';
import { canRunPrivatePostgres, PrivatePostgres } from './private-postgres.ts';
import { canRunPrivateRedis, PrivateRedis } from './private-redis.ts';
import { PrivateS3 } from './private-s3.ts';

/** Whether the binaries are here (initdb, pg_ctl, postgres, redis-server). */
export const canRunChaos = canRunPrivatePostgres && canRunPrivateRedis;

/**
 * The dependency bounds every instance runs with (the settings of issue 29; the statement and S3
 * request bounds are lowered from their 15 s defaults so that a 20 s freeze outlasts them clearly).
 */
export const DEPENDENCY_BOUNDS_MS = {
  REDIS_COMMAND_TIMEOUT_MS: 1000,
  REDIS_CONNECT_TIMEOUT_MS: 1000,
  DATABASE_CONNECT_TIMEOUT_MS: 2000,
  DATABASE_STATEMENT_TIMEOUT_MS: 5000,
  S3_CONNECT_TIMEOUT_MS: 2000,
  S3_REQUEST_TIMEOUT_MS: 5000,
} as const;

/** The longest wait any one dependency may cost a request. */
export const LONGEST_DEPENDENCY_BOUND_MS = Math.max(...Object.values(DEPENDENCY_BOUNDS_MS));

export interface ChaosOptions {
  instances?: number;
  /** Each instance's BATCH_CONCURRENCY (small, so that a batch spans the faults). Default 1. */
  batchConcurrency?: number;
  /** How long the upstream takes per batch line. Default 500 ms. */
  batchLatencyMs?: number;
  /** LOG_LEVEL of the instances. Default warn. */
  logLevel?: string;
}

export class ChaosEnvironment {
  private constructor(
    readonly postgres: PrivatePostgres,
    readonly redis: PrivateRedis,
    readonly s3: PrivateS3,
    readonly upstream: ChaosUpstream,
    readonly fleet: Fleet,
    readonly key: string,
    private readonly directory: string,
  ) {}

  static async start(options: ChaosOptions = {}): Promise<ChaosEnvironment> {
    const parts: { postgres?: PrivatePostgres; redis?: PrivateRedis; s3?: PrivateS3; upstream?: ChaosUpstream; fleet?: Fleet } = {};
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-chaos-'));
    const killAll = (): void => {
      parts.fleet?.closeSync();
      parts.s3?.closeSync();
      parts.redis?.closeSync();
      parts.postgres?.closeSync();
    };
    // A run cut short (Ctrl-C, a CI cancel) must not leave a private server behind either.
    const onSignal = (signal: NodeJS.Signals): void => {
      killAll();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    process.once('exit', killAll);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      [parts.postgres, parts.redis, parts.s3, parts.upstream] = await Promise.all([
        PrivatePostgres.create(),
        PrivateRedis.create(),
        PrivateS3.create(),
        new ChaosUpstream(options.batchLatencyMs ?? 500).start(),
      ]);
      const configFile = join(directory, 'config.json');
      parts.upstream.writeConfig(configFile);
      const env: NodeJS.ProcessEnv = {
        DATABASE_URL: parts.postgres.url,
        REDIS_URL: parts.redis.url,
        SWITCHYARD_CONFIG: configFile,
        BATCH_CONCURRENCY: String(options.batchConcurrency ?? 1),
        BATCH_LEASE_MS: '3000',
        LOG_LEVEL: options.logLevel ?? 'warn',
        ...parts.s3.env(),
        ...Object.fromEntries(Object.entries(DEPENDENCY_BOUNDS_MS).map(([name, value]) => [name, String(value)])),
      };
      parts.fleet = await Fleet.start(options.instances ?? 2, env);
      const created = await runCli(['keys', 'create', '--org', 'org-chaos', '--create-org', '--tier', 'Production', '--json'], env);
      if (created.code !== 0) throw new Error(`keys create failed: ${created.stderr}`);
      const { key } = JSON.parse(created.stdout) as { key: string };
      const environment = new ChaosEnvironment(parts.postgres, parts.redis, parts.s3, parts.upstream, parts.fleet, key, directory);
      environment.removeHandlers = () => {
        process.removeListener('exit', killAll);
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
      };
      return environment;
    } catch (error) {
      await closeParts(parts);
      process.removeListener('exit', killAll);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
  }

  private removeHandlers: () => void = () => undefined;

  /** Stops everything (thawing what is frozen first); every part is closed even if another fails. */
  async close(): Promise<void> {
    await closeParts(this);
    this.removeHandlers();
    rmSync(this.directory, { recursive: true, force: true });
  }
}

async function closeParts(parts: {
  postgres?: PrivatePostgres | undefined;
  redis?: PrivateRedis | undefined;
  s3?: PrivateS3 | undefined;
  upstream?: ChaosUpstream | undefined;
  fleet?: Fleet | undefined;
}): Promise<void> {
  parts.postgres?.thaw();
  parts.redis?.thaw();
  // Instances first (their SIGTERM drains against live dependencies), then what they used.
  await Promise.allSettled([parts.fleet?.close()]);
  await Promise.allSettled([parts.s3?.close(), parts.redis?.close(), parts.upstream?.close(), parts.postgres?.close()]);
}
