// Graceful shutdown of `switchyard serve` on SIGTERM: in-flight answers (a slow stream) finish,
// new connections are refused, the process exits 0, and the usage ledger is flushed before storage
// closes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { runCli } from '../support/run-cli.ts';
import { startServerProcess } from '../support/server-process.ts';

describe('graceful shutdown', () => {
  const upstream = new MockOpenAIServer();
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    await upstream.start();
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-shutdown-'));
    const configFile = join(dataDir, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        bootstrapKey: false,
        providers: { slow: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'slow-model', provider: 'slow', capabilities: ['chat', 'streaming'] }],
      }),
    );
    env = { DATA_DIR: dataDir, SWITCHYARD_CONFIG: configFile };
  });
  after(async () => {
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('SIGTERM lets an in-flight stream finish, refuses new connections, flushes the ledger and exits 0', async () => {
    const created = await runCli(['keys', 'create', '--org', 'org-shutdown', '--create-org', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const server = await startServerProcess(env);

    // Ten words, 150 ms apart: the stream is still running when the signal arrives.
    upstream.enqueue({ type: 'reply', reply: { text: 'one two three four five six seven eight nine ten' }, delayMs: 150 });
    const response = await fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'slow-model',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'count' }],
      }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    await reader.read(); // the stream has started
    const exitCode = server.stop();

    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    assert.match(text, /"usage":\{/);
    assert.match(text, /data: \[DONE\]\n\n$/);
    assert.equal(await exitCode, 0);
    await assert.rejects(fetch(`${server.origin}/healthz`));

    const report = await runCli(['usage', '--org', 'org-shutdown', '--json'], env);
    assert.equal(report.code, 0, report.stderr);
    const { models } = JSON.parse(report.stdout) as { models: Array<{ model: string; requests: number }> };
    assert.deepEqual(
      models.map((row) => [row.model, row.requests]),
      [['slow-model', 1]],
    );
  });
});
