/**
 * Starts a real Switchyard (composition root, real SQLite file or the Postgres in TEST_DATABASE_URL,
 * real HTTP listener on 127.0.0.1:0) for end-to-end tests, with one key per tier asked for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig, type Config, type ConfigInput } from '../../src/config/index.ts';
import { startRuntime, type Runtime, type StartRuntimeOptions } from '../../src/runtime.ts';

export interface TestServer {
  runtime: Runtime;
  config: Config;
  /** `http://127.0.0.1:<port>` (no `/v1`). */
  origin: string;
  /** `http://127.0.0.1:<port>/v1`, the OpenAI SDK base URL. */
  baseUrl: string;
  /** A Developer-tier key with every permission. */
  key: string;
  dataDir: string;
  /** Creates another key on this server. */
  createKey(options?: {
    tier?: string;
    permissions?: string[];
    organization?: string;
    expiresInMs?: number;
  }): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export interface StartTestServerOptions {
  /** Config values on top of the test defaults (silent logs, temp data dir). */
  config?: ConfigInput;
  /** Environment the config is read from (defaults to an empty one: tests do not inherit the shell's). */
  env?: NodeJS.ProcessEnv;
  /** Routes added behind Switchyard's edge (BuildAppOptions.extraRoutes). */
  extraRoutes?: StartRuntimeOptions['extraRoutes'];
  /** The process logger (default: silent), e.g. one writing into a test's own stream. */
  logger?: StartRuntimeOptions['logger'];
  /** Whether this instance runs the alerts' delivery dispatcher (default true). */
  alertDispatcher?: boolean;
  /** Time source of files, batches and budget periods (tests step over a month's end). */
  clock?: StartRuntimeOptions['clock'];
}

export async function startTestServer(options: StartTestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const config = loadConfig({
    env: options.env ?? {},
    overrides: {
      dataDir,
      logLevel: 'silent',
      bootstrapKey: false,
      ...options.config,
      server: { port: 0, host: '127.0.0.1', ...options.config?.server },
    },
  });
  let runtime: Runtime;
  try {
    runtime = await startRuntime(config, {
      logger: options.logger ?? pino({ level: 'silent' }),
      ...(options.extraRoutes === undefined ? {} : { extraRoutes: options.extraRoutes }),
      ...(options.alertDispatcher === undefined ? {} : { alertDispatcher: options.alertDispatcher }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  } catch (error) {
    // A start that fails (a test of a refused configuration) leaves no data directory behind.
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const address = runtime.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const origin = `http://127.0.0.1:${address.port}`;
  const created = await runtime.keys.create({ tier: 'Developer', name: 'test' });
  return {
    runtime,
    config,
    origin,
    baseUrl: `${origin}/v1`,
    key: created.key,
    dataDir,
    async createKey(keyOptions = {}) {
      const result = await runtime.keys.create({
        ...(keyOptions.tier === undefined ? {} : { tier: keyOptions.tier }),
        ...(keyOptions.permissions === undefined ? {} : { permissions: keyOptions.permissions }),
        ...(keyOptions.organization === undefined ? {} : { organization: keyOptions.organization }),
        ...(keyOptions.expiresInMs === undefined ? {} : { expiresInMs: keyOptions.expiresInMs }),
      });
      return { key: result.key, id: result.record.id };
    },
    async close() {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
