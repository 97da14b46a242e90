/**
 * A real Switchyard for the files and batches end-to-end tests: like test/support/test-server.ts, plus
 * the runtime options these tests need (an injected clock, the batch worker off or tuned).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config, type ConfigInput } from '../../../src/config/index.ts';
import { startRuntime, type Runtime, type StartRuntimeOptions } from '../../../src/runtime.ts';

export interface BatchTestServer {
  runtime: Runtime;
  config: Config;
  /** `http://127.0.0.1:<port>` (no `/v1`). */
  origin: string;
  /** The OpenAI SDK base URL. */
  baseUrl: string;
  /** A Developer-tier key with every permission, in organization `org-main`. */
  key: string;
  dataDir: string;
  createKey(options?: { tier?: string; permissions?: string[]; organization?: string }): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export interface StartBatchTestServerOptions {
  config?: ConfigInput;
  runtime?: Pick<StartRuntimeOptions, 'clock' | 'batchWorker'>;
}

export async function startBatchTestServer(options: StartBatchTestServerOptions = {}): Promise<BatchTestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-batch-e2e-'));
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      logLevel: 'silent',
      bootstrapKey: false,
      ...options.config,
      server: { port: 0, host: '127.0.0.1', ...options.config?.server },
    },
  });
  const runtime = await startRuntime(config, { ...options.runtime, batchWorker: options.runtime?.batchWorker ?? { pollIntervalMs: 50 } });
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const address = runtime.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const origin = `http://127.0.0.1:${address.port}`;
  const created = await runtime.keys.create({ tier: 'Developer', name: 'test', organization: 'org-main' });
  return {
    runtime,
    config,
    origin,
    baseUrl: `${origin}/v1`,
    key: created.key,
    dataDir,
    async createKey(keyOptions = {}) {
      const result = await runtime.keys.create({
        organization: keyOptions.organization ?? 'org-main',
        ...(keyOptions.tier === undefined ? {} : { tier: keyOptions.tier }),
        ...(keyOptions.permissions === undefined ? {} : { permissions: keyOptions.permissions }),
      });
      return { key: result.key, id: result.record.id };
    },
    async close() {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
