// Routing end to end: the answering deployment in the `x-switchyard-deployment` header (JSON and
// streamed answers), in the usage ledger and in /metrics; and the `switchyard routes` command.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { routesCommand } from '../../src/cli/routes.ts';
import { loadConfig } from '../../src/config/index.ts';
import { MemoryDeploymentState } from '../../src/limits/memory/memory-deployment-state.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail('condition not reached');
}

describe('routing end to end', () => {
  const upstreamA = new MockOpenAIServer();
  const upstreamB = new MockOpenAIServer();
  let server: TestServer;

  before(async () => {
    await Promise.all([upstreamA.start(), upstreamB.start()]);
    server = await startTestServer({
      config: {
        providers: {
          'openai-a': { kind: 'openai-compatible', baseUrl: upstreamA.baseUrl, maxRetries: 0 },
          'openai-b': { kind: 'openai-compatible', baseUrl: upstreamB.baseUrl, maxRetries: 0 },
        },
        models: [
          {
            id: 'routed',
            capabilities: ['chat', 'streaming'],
            routing: 'weighted',
            deployments: [
              { provider: 'openai-a', weight: 1000, requestsPerMinute: 500 },
              { provider: 'openai-b', upstreamModel: 'routed-2024', weight: 1 },
            ],
          },
        ],
      },
    });
  });
  after(async () => {
    await server.close();
    await Promise.all([upstreamA.close(), upstreamB.close()]);
  });

  test('the answering deployment is named in the header, the ledger and /metrics', async () => {
    // A (weight 1000 against 1: tried first with near certainty) fails before its first byte and then
    // cools for 60 s; B answers every request, and the client never sees an error.
    upstreamA.enqueue({ type: 'error', status: 503, headers: { 'retry-after': '60' } });
    const requestIds: string[] = [];
    for (const stream of [false, true, false, true]) {
      const response = await fetch(`${server.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'routed', stream, messages: [{ role: 'user', content: 'hello' }] }),
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-switchyard-deployment'), 'openai-b');
      await response.text();
      requestIds.push(response.headers.get('x-request-id')!);
    }
    assert.equal(upstreamA.requests.length, 1);
    assert.equal(upstreamB.requests.length, 4);
    assert.equal((upstreamB.requests[0]!.body as { model: string }).model, 'routed-2024');

    const database = server.runtime.database.db;
    let rows: Array<{ request_id: string; deployment: string | null }> = [];
    await eventually(async () => {
      rows = await database.selectFrom('usage_ledger').select(['request_id', 'deployment']).where('request_id', 'in', requestIds).execute();
      return rows.length === requestIds.length;
    });
    assert.deepEqual(new Set(rows.map((row) => row.deployment)), new Set(['openai-b']));

    const metrics = await (await fetch(`${server.origin}/metrics`)).text();
    assert.match(metrics, /switchyard_deployment_requests_total\{model="routed",deployment="openai-b"\} 4/);
    assert.match(metrics, /switchyard_deployment_errors_total\{model="routed",deployment="openai-a",code="service_unavailable"\} 1/);
    assert.match(metrics, /switchyard_deployment_cooldowns_total\{model="routed",deployment="openai-a"\} 1/);
    assert.match(metrics, /switchyard_deployment_in_flight\{model="routed",deployment="openai-b"\} 0/);
    assert.match(metrics, /switchyard_deployment_time_to_first_token_seconds_count\{model="routed",deployment="openai-b"\} 4/);
  });

  test('switchyard routes prints each deployment with its live state', async () => {
    const config = loadConfig({
      env: {},
      overrides: {
        builtinModels: false,
        providers: {
          'openai-a': { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKeys: ['sk-one-0123456789', 'sk-two-0123456789'] },
          'openai-b': { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
        },
        models: [
          {
            id: 'routed',
            capabilities: ['chat'],
            routing: 'least-busy',
            deployments: [{ provider: 'openai-a', weight: 3, requestsPerMinute: 500 }, { provider: 'openai-b' }],
          },
          { id: 'plain', provider: 'openai-b', capabilities: ['chat'] },
        ],
      },
    });
    const nowMs = Date.UTC(2026, 0, 1, 12, 0, 30);
    const clock = { now: () => nowMs };
    const state = new MemoryDeploymentState({ clock });
    await state.acquire({ model: 'routed', deployment: 'openai-a#2' }, { requestsPerMinute: 500, tokensPerMinute: 0 }, 0);
    state.coolDown({ model: 'routed', deployment: 'openai-b' }, nowMs + 5000);
    state.observeLatency({ model: 'routed', deployment: 'openai-a#1' }, 120.4);
    const lines: string[] = [];
    await routesCommand(config, { positionals: [], flags: {} }, (line) => lines.push(line), { state, clock });
    assert.match(lines[0]!, /^model \| strategy \| deployment/);
    assert.deepEqual(lines.slice(1), [
      'routed | least-busy | openai-a#1 | routed | 1.5 | 0/500 | 0/∞ | 0 | healthy | 120',
      'routed | least-busy | openai-a#2 | routed | 1.5 | 1/500 | 0/∞ | 1 | healthy | -',
      `routed | least-busy | openai-b | routed | 1 | 0/∞ | 0/∞ | 0 | ${new Date(nowMs + 5000).toISOString()} | -`,
      'plain | direct | openai-b | plain | 1 | -/∞ | -/∞ | - | - | -',
    ]);
    const json: string[] = [];
    await routesCommand(config, { positionals: [], flags: { json: true, model: 'routed' } }, (line) => json.push(line), { state, clock });
    const parsed = JSON.parse(json[0]!) as { deployments: Array<{ deployment: string; live: { in_flight: number } | null }> };
    assert.deepEqual(
      parsed.deployments.map((row) => [row.deployment, row.live?.in_flight]),
      [
        ['openai-a#1', 0],
        ['openai-a#2', 1],
        ['openai-b', 0],
      ],
    );
  });

  test('switchyard routes from the command line, without Redis, prints the configuration', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-routes-'));
    try {
      const configFile = join(directory, 'switchyard.yaml');
      writeFileSync(
        configFile,
        [
          'builtinModels: false',
          'providers:',
          '  openai-a: { kind: openai-compatible, baseUrl: "http://127.0.0.1:9/v1" }',
          '  openai-b: { kind: openai-compatible, baseUrl: "http://127.0.0.1:9/v1" }',
          'models:',
          '  - id: gpt-4o-mini',
          '    capabilities: [chat, streaming]',
          '    routing: weighted',
          '    deployments:',
          '      - { provider: openai-a, weight: 3, requestsPerMinute: 500 }',
          '      - { provider: openai-b, upstreamModel: gpt-4o-mini-2024-07-18, weight: 1 }',
          '',
        ].join('\n'),
      );
      const result = await runCli(['routes', '--config', configFile], { DATA_DIR: directory });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /configuration only/);
      assert.match(result.stdout, /gpt-4o-mini \| weighted \| openai-b \| gpt-4o-mini-2024-07-18 \| 1 \| -\/∞/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
