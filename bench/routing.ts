/**
 * Routing decision cost: CPU time per request of `route(model).next()` plus the lease's first-byte and
 * end reports (with the per-deployment Prometheus metrics, as in production), for the single-provider
 * path (one deployment, no limits: no state touched) beside each strategy over two deployments on the
 * in-process state, in the same run. Target: under 5 µs per request. Figures are printed, never asserted.
 *
 * Run: node --import tsx bench/routing.ts      (BENCH_ITERATIONS=200000 by default)
 */
import { Registry } from 'prom-client';
import { loadConfig, type ModelConfig } from '../src/config/index.ts';
import { DeploymentMetrics } from '../src/http/metrics.ts';
import { MemoryDeploymentState } from '../src/limits/memory/memory-deployment-state.ts';
import { deploymentTable } from '../src/services/generation/routing/deployment-table.ts';
import { Router } from '../src/services/generation/routing/router.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200_000);
const WARMUP = Math.min(20_000, ITERATIONS);

const config = loadConfig({
  env: {},
  overrides: {
    builtinModels: false,
    providers: {
      a: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
      b: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
    },
    models: [
      { id: 'single', provider: 'a', capabilities: ['chat'] },
      { id: 'weighted', capabilities: ['chat'], routing: 'weighted', deployments: [{ provider: 'a', weight: 3 }, { provider: 'b' }] },
      { id: 'least-busy', capabilities: ['chat'], routing: 'least-busy', deployments: [{ provider: 'a' }, { provider: 'b' }] },
      { id: 'latency', capabilities: ['chat'], routing: 'latency', deployments: [{ provider: 'a' }, { provider: 'b' }] },
      {
        id: 'usage',
        capabilities: ['chat'],
        routing: 'usage',
        deployments: [
          { provider: 'a', requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000_000 },
          { provider: 'b', requestsPerMinute: 1_000_000_000 },
        ],
      },
    ],
  },
});

const router = new Router({
  models: deploymentTable(config),
  state: new MemoryDeploymentState(),
  observer: new DeploymentMetrics(new Registry()),
});
const modelById = new Map(config.models.map((model) => [model.id, model]));

/** CPU microseconds (user + system) per routed request. */
async function measure(model: ModelConfig, iterations: number): Promise<number> {
  const tokens = (): number => 120;
  const started = process.cpuUsage();
  for (let index = 0; index < iterations; index++) {
    const step = await router.route(model).next(tokens);
    if (step.lease === undefined) throw new Error(`bench was refused: ${step.error.code}`);
    step.lease.firstByte();
    step.lease.end(300);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations;
}

/** The loop alone (one awaited resolved promise per request): what every row includes. */
async function measureLoop(iterations: number): Promise<number> {
  const started = process.cpuUsage();
  for (let index = 0; index < iterations; index++) await Promise.resolve(index);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations;
}

const names = ['single', 'weighted', 'least-busy', 'latency', 'usage'];
for (const name of names) await measure(modelById.get(name)!, WARMUP);
await measureLoop(WARMUP);

const loop = await measureLoop(ITERATIONS);
const rows: Array<[string, number]> = [];
for (const name of names) rows.push([name, await measure(modelById.get(name)!, ITERATIONS)]);
const single = rows[0]![1];

console.log(
  `routing decision cost: ${ITERATIONS.toLocaleString('en-US')} requests per row, node ${process.version}, in-process state, metrics on`,
);
console.log('| path | deployments | CPU µs / request | vs single-provider | target < 5 µs |');
console.log('|---|---|---|---|---|');
console.log(`| loop alone (baseline) | - | ${loop.toFixed(3)} | - | - |`);
for (const [name, microseconds] of rows) {
  const deployments = name === 'single' ? '1 (direct)' : '2';
  const label = name === 'single' ? 'single provider' : name;
  const delta = name === 'single' ? '-' : `+${(microseconds - single).toFixed(3)}`;
  console.log(`| ${label} | ${deployments} | ${microseconds.toFixed(3)} | ${delta} | ${microseconds < 5 ? 'yes' : 'NO'} |`);
}
