// Upstream keys read from a file (`apiKey: { file }`): when the file changes, the next upstream
// requests carry the new key (the mock upstreams record the Authorization / x-api-key header); a
// re-read that fails keeps the last good key and is logged once until a read succeeds again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LanguageModel, ProviderInstance } from '../../src/core/language-model.ts';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.ts';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible/openai-compatible-provider.ts';
import { ProviderRegistry } from '../../src/providers/registry.ts';
import { MockAnthropicServer, MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { until } from '../support/until.ts';
import { collect, userRequest } from './helpers.ts';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-key-file-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** Writes `text` to the key file; the size differs from the last write so that the change is seen. */
function writeKey(path: string, text: string): void {
  writeFileSync(path, text);
}

const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Ends the read holding a FIFO: opened without blocking (ENXIO until its reader is in), bounded. */
async function letGo(fifo: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const descriptor = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(descriptor, 'x');
      closeSync(descriptor);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO' || Date.now() > deadline) throw error;
      await sleep(10);
    }
  }
}

describe('openai-compatible: apiKey from a file', () => {
  const server = new MockOpenAIServer();
  const path = join(directory, 'openai.key');
  const warnings: Record<string, unknown>[] = [];
  let provider: ProviderInstance;
  let model: LanguageModel;

  before(async () => {
    await server.start();
    writeKey(path, 'sk-one\n');
    provider = createOpenAICompatibleProvider(
      {
        kind: 'openai-compatible',
        id: 'keyed',
        baseUrl: server.baseUrl,
        apiKeyValue: 'sk-one',
        apiKeyFile: path,
        timeoutMs: 10_000,
        maxRetries: 0,
        headers: {},
      },
      { logger: { warn: (object) => void warnings.push(object), debug: () => undefined } },
    );
    model = provider.languageModel!('upstream-model');
  });
  after(async () => {
    await provider.close?.();
    await server.close();
  });

  /** The Authorization header of one more request. */
  const sentKey = async (): Promise<string | undefined> => {
    server.reset();
    await collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal }));
    return server.requests[0]!.headers['authorization'] as string | undefined;
  };

  test('a changed file: the next requests carry the new key', async () => {
    assert.equal(await sentKey(), 'Bearer sk-one');
    writeKey(path, 'sk-second-key\n');
    await until(async () => ((await sentKey()) === 'Bearer sk-second-key' ? true : undefined), 'the new key upstream', 10_000, 100);
    // From then on, every request (and every model of the provider) carries it.
    assert.equal(await sentKey(), 'Bearer sk-second-key');
    const embeddings = provider.embeddingModel!('embed-model');
    server.reset();
    await embeddings.embed(['x'], { signal: new AbortController().signal }).catch(() => undefined);
    assert.equal(server.requests[0]!.headers['authorization'], 'Bearer sk-second-key');
  });

  test('a change written before the first poll ran is still seen (the thread pool busy when the watch starts)', async () => {
    // Reads of FIFOs nobody writes yet hold every thread of libuv's pool, so no status can be taken in
    // it until they are let go: a watch whose first status is taken there would take it after the change.
    const threads = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
    const fifos = Array.from({ length: threads }, (_, index) => join(directory, `busy-${index}.fifo`));
    for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
    const held = fifos.map((fifo) => readFile(fifo));
    const early = join(directory, 'early.key');
    writeKey(early, 'sk-before\n');
    const watched = createOpenAICompatibleProvider(
      {
        kind: 'openai-compatible',
        id: 'early',
        baseUrl: server.baseUrl,
        apiKeyValue: 'sk-before',
        apiKeyFile: early,
        timeoutMs: 10_000,
        maxRetries: 0,
        headers: {},
      },
      {},
    );
    try {
      writeKey(early, 'sk-after-the-watch-started\n');
      for (const fifo of fifos) await letGo(fifo);
      await Promise.all(held);
      const earlyModel = watched.languageModel!('upstream-model');
      const sent = async (): Promise<unknown> => {
        server.reset();
        await collect(earlyModel.stream(userRequest('Hi'), { signal: new AbortController().signal }));
        return server.requests[0]!.headers['authorization'];
      };
      await until(
        async () => ((await sent()) === 'Bearer sk-after-the-watch-started' ? true : undefined),
        'the key written early',
        10_000,
        100,
      );
    } finally {
      await watched.close?.();
    }
  });

  test('a failed re-read keeps the last good key and is logged once', async () => {
    unlinkSync(path);
    await until(async () => (warnings.length > 0 ? true : undefined), 'the failed re-read logged', 10_000, 100);
    assert.equal(await sentKey(), 'Bearer sk-second-key');
    writeKey(path, '\n');
    await sleep(2_500); // at least two polls: the empty file is read again and refused
    assert.equal(await sentKey(), 'Bearer sk-second-key');
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!['file'], path);
    assert.doesNotMatch(JSON.stringify(warnings), /sk-second-key/);
    // A good key again: used, and the next failure is logged again.
    writeKey(path, 'sk-third-key-after-failure\n');
    await until(
      async () => ((await sentKey()) === 'Bearer sk-third-key-after-failure' ? true : undefined),
      'the key after a failure',
      10_000,
      100,
    );
  });
});

describe('anthropic: apiKey from a file, also one of several apiKeys', () => {
  const server = new MockAnthropicServer();
  const first = join(directory, 'anthropic.key');
  const second = join(directory, 'anthropic-second.key');

  before(async () => {
    await server.start();
  });
  after(async () => server.close());

  const sentKey = async (model: LanguageModel): Promise<string | undefined> => {
    server.reset();
    await collect(model.stream(userRequest('Hi'), { signal: new AbortController().signal }));
    return server.requests[0]!.headers['x-api-key'] as string | undefined;
  };

  test('x-api-key follows the file', async () => {
    writeKey(first, 'sk-ant-one\n');
    const config = {
      kind: 'anthropic' as const,
      id: 'anthropic-keyed',
      baseUrl: server.baseUrl,
      apiKeyValue: 'sk-ant-one',
      apiKeyFile: first,
      anthropicVersion: '2023-06-01',
      timeoutMs: 10_000,
      maxRetries: 0,
      headers: {},
    };
    const provider = createAnthropicProvider(config, {});
    try {
      const model = provider.languageModel!('claude');
      assert.equal(await sentKey(model), 'sk-ant-one');
      writeKey(first, 'sk-ant-two-changed\n');
      await until(async () => ((await sentKey(model)) === 'sk-ant-two-changed' ? true : undefined), 'the new key upstream', 10_000, 100);
    } finally {
      await provider.close?.();
    }
  });

  test('each of several keys follows its own file', async () => {
    writeKey(second, 'sk-ant-b\n');
    const registry = new ProviderRegistry({
      several: {
        kind: 'anthropic',
        id: 'several',
        baseUrl: server.baseUrl,
        apiKeyValue: 'sk-ant-a',
        apiKeyValues: ['sk-ant-a', 'sk-ant-b'],
        apiKeyFiles: [undefined, second],
        anthropicVersion: '2023-06-01',
        timeoutMs: 10_000,
        maxRetries: 0,
        headers: {},
      },
    });
    try {
      const catalogued = { id: 'claude', provider: 'several', capabilities: ['chat'] } as never;
      const [a, b] = [0, 1].map((keyIndex) =>
        registry.languageModel(catalogued, { provider: 'several', keyIndex, upstreamModel: 'claude' }),
      );
      assert.equal(await sentKey(a!), 'sk-ant-a');
      assert.equal(await sentKey(b!), 'sk-ant-b');
      writeKey(second, 'sk-ant-b-changed\n');
      await until(async () => ((await sentKey(b!)) === 'sk-ant-b-changed' ? true : undefined), 'the second key changed', 10_000, 100);
      assert.equal(await sentKey(a!), 'sk-ant-a');
    } finally {
      await registry.close();
    }
  });
});
