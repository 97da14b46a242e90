// A llama-cpp model's GGUF file is checked when the service starts: missing, not a file, or not GGUF
// is a config error naming the model, the setting and the path; the config itself still loads (the
// CLI works without the weights); models of other providers are not files and are not checked.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { checkModelFiles, ConfigError, loadConfig } from '../../src/config/index.ts';
import { startRuntime } from '../../src/runtime.ts';

describe('GGUF files are checked at start', () => {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-gguf-check-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  const gguf = join(directory, 'model.gguf');
  // The four magic bytes and a version: enough for the check (the loader reads the rest on first use).
  writeFileSync(gguf, Buffer.concat([Buffer.from('GGUF', 'latin1'), Buffer.from([3, 0, 0, 0])]));
  const notGguf = join(directory, 'model.bin');
  writeFileSync(notGguf, 'not a model');
  mkdirSync(join(directory, 'folder.gguf'));

  const config = (upstreamModel: string, deployments = false) =>
    loadConfig({
      env: {},
      overrides: {
        dataDir: directory,
        logLevel: 'silent',
        bootstrapKey: false,
        providers: {
          local: { kind: 'llama-cpp', threads: 1 },
          remote: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
        },
        models: deployments
          ? [
              {
                id: 'mixed',
                capabilities: ['chat'],
                deployments: [
                  { provider: 'remote', upstreamModel: 'gpt-x' },
                  { provider: 'local', upstreamModel },
                ],
              },
            ]
          : [
              { id: 'remote-model', provider: 'remote', upstreamModel: 'no/such/file', capabilities: ['chat'] },
              { id: 'local-model', provider: 'local', upstreamModel, capabilities: ['chat'] },
            ],
      },
    });

  test('a readable GGUF file passes; an upstream model name of another provider is not a file', () => {
    checkModelFiles(config(gguf));
    checkModelFiles(config(gguf, true));
  });

  test('missing, a folder, or not GGUF: a config error naming the model, the setting and the path', () => {
    const missing = join(directory, 'missing.gguf');
    assert.throws(
      () => checkModelFiles(config(missing)),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          `models[1].upstreamModel of the llama-cpp model "local-model": the GGUF file ${missing} does not exist. Put the model file there or fix the path.`,
    );
    assert.throws(() => checkModelFiles(config(join(directory, 'folder.gguf'))), /folder\.gguf is not a file/);
    assert.throws(() => checkModelFiles(config(notGguf)), /model\.bin is not a GGUF file/);
    assert.throws(
      () => checkModelFiles(config(missing, true)),
      /^ConfigError: models\[0\]\.deployments\[1\]\.upstreamModel of the llama-cpp model "mixed"/,
    );
  });

  test('the service does not start with a missing GGUF file', async () => {
    await assert.rejects(
      startRuntime(config(join(directory, 'missing.gguf')), { logger: pino({ level: 'silent' }), batchWorker: false }),
      (error: unknown) => error instanceof ConfigError && /missing\.gguf does not exist/.test(error.message),
    );
  });
});
