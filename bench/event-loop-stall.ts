/**
 * Issue 16 benchmark: can one request stall the instance? A running Switchyard (in this process, so
 * that its event loop is the one measured) serves `/healthz` polls while
 *   1. baseline: a stream of ordinary chat prompts is in flight;
 *   2. one chat prompt holding a single 1 MB word is in flight (built-in echo model, a context window
 *      large enough that the prompt is really served, not refused), non-streamed and streamed;
 *   3. the same word sent by a Free key (refused by its limits after counting).
 * For each phase it prints the `/healthz` latency (median and largest) and the largest event-loop
 * delay of the server's thread (perf_hooks.monitorEventLoopDelay). Target: /healthz under 50 ms in
 * every phase. The clients run in a worker thread, so that their own work (building and sending a
 * 1 MB body) does not count against the server.
 *
 *   node --import tsx bench/event-loop-stall.ts [wordBytes]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface ClientSetup {
  origin: string;
  enterprise: string;
  free: string;
  wordBytes: number;
}

/** Messages from the client worker: a phase starts or ends (with its /healthz figures). */
type ClientMessage =
  | { kind: 'phase-start'; phase: string }
  | { kind: 'phase-end'; phase: string; requestStatus: string; requestMs: number; latencies: number[] }
  | { kind: 'done' };

const prose = 'The quick brown fox jumps over the lazy dog and keeps running through the forest. ';

async function runClients(setup: ClientSetup, send: (message: ClientMessage) => void): Promise<void> {
  const chat = (key: string, text: string, stream: boolean): Promise<Response> =>
    fetch(`${setup.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo-wide', max_tokens: 32, stream, messages: [{ role: 'user', content: text }] }),
    });
  const phase = async (name: string, work: () => Promise<string>): Promise<void> => {
    send({ kind: 'phase-start', phase: name });
    const latencies: number[] = [];
    let running = true;
    const poller = (async () => {
      while (running) {
        const started = performance.now();
        const response = await fetch(`${setup.origin}/healthz`);
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    // Let the first poll go out before the phase's request.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    const requestStatus = await work();
    const requestMs = performance.now() - started;
    running = false;
    await poller;
    send({ kind: 'phase-end', phase: name, requestStatus, requestMs, latencies });
  };

  // Warm-up: every module on the paths measured is loaded (and compiled) here, not during a phase.
  for (const stream of [false, true]) {
    for (const key of [setup.enterprise, setup.free]) await (await chat(key, `${prose}${'y'.repeat(20_000)}`, stream)).arrayBuffer();
  }
  await phase('baseline: 40 ordinary prompts (4 at a time)', async () => {
    let ok = 0;
    for (let round = 0; round < 10; round++) {
      const responses = await Promise.all([0, 1, 2, 3].map((index) => chat(setup.enterprise, prose.repeat(20 + index), index % 2 === 0)));
      for (const response of responses) {
        await response.arrayBuffer();
        if (response.ok) ok++;
      }
    }
    return `${ok}/40 ok`;
  });
  const word = 'x'.repeat(setup.wordBytes);
  const size = `${Math.round(setup.wordBytes / 1024)} KiB`;
  for (const stream of [false, true]) {
    await phase(`one ${size} single-word prompt${stream ? ' (streamed)' : ''}`, async () => {
      const response = await chat(setup.enterprise, word, stream);
      await response.arrayBuffer();
      return String(response.status);
    });
  }
  await phase(`the ${size} word from a Free key (refused)`, async () => {
    const response = await chat(setup.free, word, false);
    await response.arrayBuffer();
    return String(response.status);
  });
  send({ kind: 'done' });
}

async function runServer(): Promise<void> {
  const { pino } = await import('pino');
  const { loadConfig } = await import('../src/config/index.ts');
  const { startRuntime } = await import('../src/runtime.ts');
  const wordBytes = Number(process.argv[2] ?? 1024 * 1024);
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-stall-bench-'));
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      logLevel: 'silent',
      bootstrapKey: false,
      server: { host: '127.0.0.1', port: 0, bodyLimitBytes: 8 * 1024 * 1024 },
      models: [
        {
          id: 'echo-wide',
          provider: 'builtin',
          upstreamModel: 'echo',
          capabilities: ['chat', 'streaming'],
          contextWindow: 4_000_000,
          maxOutputTokens: 64,
        },
      ],
    },
  });
  const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
  const rows: Array<Record<string, string | number>> = [];
  try {
    await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    const address = runtime.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const setup: ClientSetup = {
      origin: `http://127.0.0.1:${address.port}`,
      enterprise: (await runtime.keys.create({ tier: 'Enterprise', name: 'bench' })).key,
      free: (await runtime.keys.create({ tier: 'Free', name: 'bench-free' })).key,
      wordBytes,
    };
    // The worker loads this same file through tsx (a worker's execArgv cannot carry `--import`).
    const self = JSON.stringify(import.meta.url);
    const worker = new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${self}, ${self}))`, {
      eval: true,
      workerData: setup,
    });
    let histogram: IntervalHistogram | undefined;
    await new Promise<void>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (message: ClientMessage) => {
        if (message.kind === 'phase-start') {
          histogram = monitorEventLoopDelay({ resolution: 1 });
          histogram.enable();
        } else if (message.kind === 'phase-end') {
          histogram?.disable();
          const latencies = [...message.latencies].sort((a, b) => a - b);
          rows.push({
            phase: message.phase,
            request: `${message.requestStatus} in ${message.requestMs.toFixed(0)} ms`,
            '/healthz polls': latencies.length,
            '/healthz median ms': (latencies[Math.floor(latencies.length / 2)] ?? 0).toFixed(1),
            '/healthz max ms': (latencies.at(-1) ?? 0).toFixed(1),
            'max event-loop delay ms': ((histogram?.max ?? 0) / 1e6).toFixed(1),
          });
        } else {
          resolve();
        }
      });
    });
    await worker.terminate();
  } finally {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\nEvent-loop stall, /healthz polled every 5 ms during each phase (target: /healthz < 50 ms)`);
  console.table(rows);
}

if (isMainThread) await runServer();
else await runClients(workerData as ClientSetup, (message) => parentPort!.postMessage(message));
