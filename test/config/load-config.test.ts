import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

function writeTemp(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'switchyard-config-')), name);
  writeFileSync(path, text);
  return path;
}

describe('loadConfig', () => {
  test('an empty environment gives a working default: SQLite under ./data, built-in models, default tiers', () => {
    const config = loadConfig({ env: {} });
    assert.equal(config.operator, 'switchyard');
    assert.equal(config.defaultOrganization, 'org-switchyard-ai');
    assert.equal(config.server.port, 8080);
    assert.equal(config.server.host, '127.0.0.1');
    assert.match(config.databaseUrl, /^sqlite:.*data\/switchyard\.db$/);
    assert.deepEqual(Object.keys(config.tiers), ['Free', 'Developer', 'Production', 'Enterprise']);
    assert.equal(config.tiers['Free']!.tokensPerMonth, 10_000);
    assert.ok(config.models.some((model) => model.id === 'switchyard-echo'));
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.tiers) && Object.isFrozen(config.models[0]));
  });

  test('environment variables override the file; explicit overrides beat both', () => {
    const file = writeTemp('c.yaml', 'operator: acme\nserver:\n  port: 9000\n  host: 0.0.0.0\nlogLevel: warn\n');
    const env = { SWITCHYARD_CONFIG: file, PORT: '9100', DATA_DIR: '/tmp/x', REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@h/db' };
    const config = loadConfig({ env });
    assert.equal(config.operator, 'acme');
    assert.equal(config.defaultOrganization, 'org-acme-ai');
    assert.equal(config.server.port, 9100);
    assert.equal(config.server.host, '0.0.0.0');
    assert.equal(config.dataDir, '/tmp/x');
    assert.equal(config.databaseUrl, 'postgres://u@h/db');
    assert.equal(config.redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(config.logLevel, 'warn');
    assert.equal(loadConfig({ env, overrides: { server: { port: 1 } } }).server.port, 1);
  });

  test('JSON config with providers, models, aliases and an env-held provider key', () => {
    const file = writeTemp(
      'c.json',
      JSON.stringify({
        providers: { openai: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', apiKey: { env: 'UPSTREAM_KEY' } } },
        models: [{ id: 'gpt-x', provider: 'openai', aliases: ['x'], capabilities: ['chat', 'streaming'], pricing: { inputPerMillion: 1, outputPerMillion: 2 } }],
      }),
    );
    const config = loadConfig({ env: { SWITCHYARD_CONFIG: file, UPSTREAM_KEY: 'secret' } });
    assert.equal(config.providers['openai']!.apiKeyValue, 'secret');
    const model = config.models.find((entry) => entry.id === 'gpt-x')!;
    assert.deepEqual(model.aliases, ['x']);
    assert.equal(model.pricing.outputPerMillion, 2);
  });

  test('limitsBackend resolves auto to redis or memory; off and explicit choices stay', () => {
    assert.equal(loadConfig({ env: {} }).limitsBackend, 'memory');
    assert.equal(loadConfig({ env: { REDIS_URL: 'redis://127.0.0.1:6379' } }).limitsBackend, 'redis');
    assert.equal(loadConfig({ env: { REDIS_URL: 'redis://127.0.0.1:6379', LIMITS_BACKEND: 'memory' } }).limitsBackend, 'memory');
    assert.equal(loadConfig({ env: { LIMITS_BACKEND: 'off' } }).limitsBackend, 'off');
    assert.throws(() => loadConfig({ env: { LIMITS_BACKEND: 'redis' } }), /no REDIS_URL/);
    assert.throws(() => loadConfig({ env: { LIMITS_BACKEND: 'sometimes' } }), /limitsBackend/);
  });

  const badConfigs: Array<[string, Record<string, unknown>, NodeJS.ProcessEnv, RegExp]> = [
    ['wrong type names the field', { server: { port: 'eighty' } }, {}, /server\.port/],
    ['unknown field names it', { sever: {} }, {}, /sever/],
    ['unknown provider kind', { providers: { p: { kind: 'bedrock' } } }, {}, /providers\.p\.kind/],
    ['model naming a missing provider', { models: [{ id: 'm', provider: 'ghost', capabilities: ['chat'] }] }, {}, /models\[0\]\.provider "ghost"/],
    ['duplicate model name', { providers: { b: { kind: 'builtin' } }, models: [{ id: 'm', provider: 'b', capabilities: ['chat'] }, { id: 'n', provider: 'b', aliases: ['m'], capabilities: ['chat'] }] }, {}, /already used/],
    ['fallback to an unknown model', { providers: { b: { kind: 'builtin' } }, models: [{ id: 'm', provider: 'b', capabilities: ['chat'], fallbacks: ['zzz'] }] }, {}, /fallbacks\[0\]/],
    ['image model without sizes', { providers: { b: { kind: 'builtin' } }, models: [{ id: 'm', provider: 'b', capabilities: ['image_generation'] }] }, {}, /imageSizes/],
    ['missing provider key variable', { providers: { o: { kind: 'openai-compatible', baseUrl: 'http://h/v1', apiKey: { env: 'NOPE_KEY' } } } }, {}, /NOPE_KEY/],
    ['unknown default tier', { defaultTier: 'Gold' }, {}, /defaultTier "Gold"/],
    ['unsupported database url', {}, { DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    ['non-integer PORT', {}, { PORT: 'abc' }, /PORT=abc/],
  ];
  for (const [name, overrides, env, pattern] of badConfigs) {
    test(`bad config stops with a message: ${name}`, () => {
      assert.throws(() => loadConfig({ env, overrides: overrides as never }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, pattern);
        return true;
      });
    });
  }

  test('deployments: YAML shape of the README, provider filled from the first deployment, apiKeys read', () => {
    const file = writeTemp(
      'routing.yaml',
      [
        'builtinModels: false',
        'providers:',
        '  openai-a: { kind: openai-compatible, baseUrl: "https://api.openai.com/v1", apiKey: { env: KEY_A }, apiKeys: [{ env: KEY_A2 }, sk-literal-0123456789] }',
        '  openai-b: { kind: openai-compatible, baseUrl: "https://api.openai.com/v1", cooldownMs: 1500 }',
        'models:',
        '  - id: gpt-4o-mini',
        '    capabilities: [chat, streaming]',
        '    routing: least-busy',
        '    deployments:',
        '      - { provider: openai-a, weight: 3, requestsPerMinute: 500 }',
        '      - { provider: openai-b, upstreamModel: gpt-4o-mini-2024-07-18, weight: 1 }',
        '  - { id: plain, provider: openai-b, capabilities: [chat] }',
        '',
      ].join('\n'),
    );
    const config = loadConfig({ env: { SWITCHYARD_CONFIG: file, KEY_A: 'sk-a-0123456789', KEY_A2: 'sk-a2-0123456789' } });
    const routed = config.models.find((model) => model.id === 'gpt-4o-mini')!;
    assert.equal(routed.provider, 'openai-a');
    assert.equal(routed.routing, 'least-busy');
    assert.deepEqual(routed.deployments, [
      { provider: 'openai-a', weight: 3, requestsPerMinute: 500 },
      { provider: 'openai-b', upstreamModel: 'gpt-4o-mini-2024-07-18', weight: 1 },
    ]);
    assert.equal(config.models.find((model) => model.id === 'plain')!.deployments, undefined);
    assert.equal(config.providers['openai-a']!.apiKeyValue, 'sk-a-0123456789');
    assert.deepEqual(config.providers['openai-a']!.apiKeyValues, ['sk-a-0123456789', 'sk-a2-0123456789', 'sk-literal-0123456789']);
    assert.equal(config.providers['openai-b']!.apiKeyValues, undefined);
    assert.equal(config.providers['openai-b']!.cooldownMs, 1500);
  });

  test('deployment mistakes are ConfigErrors naming the field', () => {
    const providers = {
      a: { kind: 'openai-compatible' as const, baseUrl: 'http://127.0.0.1:1/v1' },
      b: { kind: 'openai-compatible' as const, baseUrl: 'http://127.0.0.1:1/v1' },
    };
    const attempt = (model: Record<string, unknown>) => () => loadConfig({ env: {}, overrides: { providers, models: [{ id: 'm', capabilities: ['chat'], ...model }] as never } });
    assert.throws(attempt({}), (error: unknown) => error instanceof ConfigError && /names no provider/.test(error.message));
    assert.throws(attempt({ provider: 'a', deployments: [{ provider: 'b' }] }), (error: unknown) => error instanceof ConfigError && /both provider and deployments/.test(error.message));
    assert.throws(attempt({ deployments: [{ provider: 'a' }, { provider: 'nope' }] }), (error: unknown) => error instanceof ConfigError && /deployments\[1\]\.provider "nope"/.test(error.message));
    assert.throws(attempt({ deployments: [{ provider: 'a' }, { provider: 'a' }] }), (error: unknown) => error instanceof ConfigError && /listed twice/.test(error.message));
    assert.throws(attempt({ deployments: [] }), (error: unknown) => error instanceof ConfigError && /deployments/.test(error.message));
    assert.throws(attempt({ deployments: [{ provider: 'a', weight: 0 }] }), (error: unknown) => error instanceof ConfigError && /weight/.test(error.message));
    assert.throws(attempt({ provider: 'a', routing: 'round-robin' }), (error: unknown) => error instanceof ConfigError && /routing/.test(error.message));
    assert.throws(
      () => loadConfig({ env: {}, overrides: { providers: { a: { ...providers.a, apiKeys: [{ env: 'MISSING_KEY' }] } } } }),
      (error: unknown) => error instanceof ConfigError && /providers\.a\.apiKeys\[0\] names the environment variable MISSING_KEY/.test(error.message),
    );
  });

  test('an unreadable or invalid config file is a ConfigError naming the file', () => {
    assert.throws(() => loadConfig({ env: { SWITCHYARD_CONFIG: '/nonexistent/c.yaml' } }), /\/nonexistent\/c\.yaml/);
    const broken = writeTemp('broken.json', '{ nope');
    assert.throws(() => loadConfig({ env: { SWITCHYARD_CONFIG: broken } }), /not valid JSON/);
  });
});
