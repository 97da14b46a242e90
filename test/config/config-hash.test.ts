// Each instance publishes the hash of its effective config; instances that disagree (a model configured
// on one only) are named in /readyz's body and in the log. The hash leaves out what may differ per
// instance (address, data directory, instance id, secret values). Real runtimes on one SQLite database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig, type ConfigInput } from '../../src/config/index.ts';
import { effectiveConfigHash } from '../../src/config/config-hash.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';

const base: ConfigInput = {
  logLevel: 'silent',
  bootstrapKey: false,
  providers: { up: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-one' } },
  models: [{ id: 'shared-model', provider: 'up', capabilities: ['chat'] }],
};

describe('config hash', () => {
  test('the same caller-visible config gives the same hash; a model more or a tier field changes it', () => {
    const hash = effectiveConfigHash(loadConfig({ env: {}, overrides: base }));
    const elsewhere = loadConfig({
      env: { PORT: '9999', HOST: '0.0.0.0', DATA_DIR: '/tmp/elsewhere', INSTANCE_ID: 'other', LOG_LEVEL: 'debug' },
      overrides: { ...base, providers: { up: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-two' } } },
    });
    assert.equal(effectiveConfigHash(elsewhere), hash, 'address, data directory, instance id and key values do not count');
    // A key read from a file (`apiKey: { file }`): neither the key nor where the file is counts.
    const keyDirectory = mkdtempSync(join(tmpdir(), 'switchyard-hash-key-'));
    try {
      writeFileSync(join(keyDirectory, 'up.key'), 'sk-three\n');
      const fromFile = loadConfig({
        env: {},
        overrides: {
          ...base,
          providers: {
            up: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKey: { file: join(keyDirectory, 'up.key') } },
          },
        },
      });
      assert.equal(effectiveConfigHash(fromFile), hash, 'a key file and its path do not count');
    } finally {
      rmSync(keyDirectory, { recursive: true, force: true });
    }
    assert.match(hash, /^[0-9a-f]{64}$/);
    const more = loadConfig({
      env: {},
      overrides: { ...base, models: [...base.models!, { id: 'only-here', provider: 'up', capabilities: ['chat'] }] },
    });
    assert.notEqual(effectiveConfigHash(more), hash);
    assert.notEqual(effectiveConfigHash(loadConfig({ env: {}, overrides: { ...base, tiers: { Free: { requestsPerMinute: 1 } } } })), hash);
  });

  test('/readyz and the log name the instance whose config differs; agreement again once it is gone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-config-hash-'));
    const databaseUrl = `sqlite:${join(root, 'shared.db')}`;
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const start = (instanceId: string, overrides: ConfigInput, logged = false): Promise<Runtime> =>
      startRuntime(loadConfig({ env: {}, overrides: { ...overrides, databaseUrl, dataDir: join(root, instanceId), instanceId } }), {
        logger: logged ? pino({ level: 'info' }, sink) : pino({ level: 'silent' }),
        batchWorker: false,
      });
    const readyz = async (runtime: Runtime) => (await runtime.app.inject({ method: 'GET', url: '/readyz' })).json() as Record<string, any>;
    try {
      const a = await start('instance-a', base);
      const b = await start(
        'instance-b',
        { ...base, models: [...base.models!, { id: 'only-on-b', provider: 'up', capabilities: ['chat'] }] },
        true,
      );
      const fromB = await readyz(b);
      assert.equal(fromB['status'], 'ready', 'a disagreement does not take the instance out of rotation');
      assert.equal(fromB['config'].instances, 2);
      assert.deepEqual(fromB['config'].disagreeing, [{ instance: 'instance-a', hash: effectiveConfigHash(a.config) }]);
      assert.equal(fromB['config'].hash, effectiveConfigHash(b.config));
      const warning = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => /config differs between instances/.test(String(line['msg'])));
      assert.ok(warning, 'logged');
      assert.deepEqual(warning['disagreeing'], fromB['config'].disagreeing);

      await b.close();
      const c = await start('instance-c', base);
      const fromC = await readyz(c);
      assert.equal(fromC['config'].instances, 2, 'a stopped instance leaves the list');
      assert.equal(fromC['config'].disagreeing, undefined);
      await c.close();
      await a.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
