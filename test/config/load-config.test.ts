import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, stableCreatedSeconds } from '../../src/config/index.ts';

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
    const env = {
      SWITCHYARD_CONFIG: file,
      PORT: '9100',
      DATA_DIR: '/tmp/x',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://u@h/db',
    };
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
        models: [
          {
            id: 'gpt-x',
            provider: 'openai',
            aliases: ['x'],
            capabilities: ['chat', 'streaming'],
            pricing: { inputPerMillion: 1, outputPerMillion: 2 },
          },
        ],
      }),
    );
    const config = loadConfig({ env: { SWITCHYARD_CONFIG: file, UPSTREAM_KEY: 'secret' } });
    assert.equal(config.providers['openai']!.apiKeyValue, 'secret');
    const model = config.models.find((entry) => entry.id === 'gpt-x')!;
    assert.deepEqual(model.aliases, ['x']);
    assert.equal(model.pricing.outputPerMillion, 2);
  });

  test('requestValidation: spec by default, REQUEST_VALIDATION=compatible, anything else refused', () => {
    assert.equal(loadConfig({ env: {} }).requestValidation, 'spec');
    assert.equal(loadConfig({ env: { REQUEST_VALIDATION: 'compatible' } }).requestValidation, 'compatible');
    assert.equal(loadConfig({ env: {}, overrides: { requestValidation: 'compatible' } }).requestValidation, 'compatible');
    assert.throws(() => loadConfig({ env: { REQUEST_VALIDATION: 'loose' } }), /requestValidation/);
  });

  test('a model without created gets the same created on every load (derived from its id), an explicit one is kept', () => {
    const overrides = {
      providers: { b: { kind: 'builtin' as const } },
      models: [
        { id: 'plain', provider: 'b', capabilities: ['chat' as const] },
        { id: 'dated', provider: 'b', capabilities: ['chat' as const], created: 1_700_000_000 },
      ],
    };
    const first = loadConfig({ env: {}, overrides }).models;
    const second = loadConfig({ env: {}, overrides }).models;
    const plain = first.find((model) => model.id === 'plain')!.created;
    assert.equal(plain, second.find((model) => model.id === 'plain')!.created);
    assert.equal(plain, stableCreatedSeconds('plain'));
    assert.ok(plain !== undefined && plain >= 1_704_067_200 && plain < 1_704_067_200 + 365 * 86_400);
    assert.notEqual(stableCreatedSeconds('plain'), stableCreatedSeconds('plain2'));
    assert.equal(first.find((model) => model.id === 'dated')!.created, 1_700_000_000);
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
    [
      'model naming a missing provider',
      { models: [{ id: 'm', provider: 'ghost', capabilities: ['chat'] }] },
      {},
      /models\[0\]\.provider "ghost"/,
    ],
    [
      'duplicate model name',
      {
        providers: { b: { kind: 'builtin' } },
        models: [
          { id: 'm', provider: 'b', capabilities: ['chat'] },
          { id: 'n', provider: 'b', aliases: ['m'], capabilities: ['chat'] },
        ],
      },
      {},
      /already used/,
    ],
    [
      'fallback to an unknown model',
      { providers: { b: { kind: 'builtin' } }, models: [{ id: 'm', provider: 'b', capabilities: ['chat'], fallbacks: ['zzz'] }] },
      {},
      /fallbacks\[0\]/,
    ],
    [
      'image model without sizes',
      { providers: { b: { kind: 'builtin' } }, models: [{ id: 'm', provider: 'b', capabilities: ['image_generation'] }] },
      {},
      /imageSizes/,
    ],
    [
      'missing provider key variable',
      { providers: { o: { kind: 'openai-compatible', baseUrl: 'http://h/v1', apiKey: { env: 'NOPE_KEY' } } } },
      {},
      /NOPE_KEY/,
    ],
    ['unknown default tier', { defaultTier: 'Gold' }, {}, /defaultTier "Gold"/],
    ['unsupported database url', {}, { DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    ['non-integer PORT', {}, { PORT: 'abc' }, /PORT=abc/],
  ];
  for (const [name, overrides, env, pattern] of badConfigs) {
    test(`bad config stops with a message: ${name}`, () => {
      assert.throws(
        () => loadConfig({ env, overrides: overrides as never }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, pattern);
          return true;
        },
      );
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
    const attempt = (model: Record<string, unknown>) => () =>
      loadConfig({ env: {}, overrides: { providers, models: [{ id: 'm', capabilities: ['chat'], ...model }] as never } });
    assert.throws(attempt({}), (error: unknown) => error instanceof ConfigError && /names no provider/.test(error.message));
    assert.throws(
      attempt({ provider: 'a', deployments: [{ provider: 'b' }] }),
      (error: unknown) => error instanceof ConfigError && /both provider and deployments/.test(error.message),
    );
    assert.throws(
      attempt({ deployments: [{ provider: 'a' }, { provider: 'nope' }] }),
      (error: unknown) => error instanceof ConfigError && /deployments\[1\]\.provider "nope"/.test(error.message),
    );
    assert.throws(
      attempt({ deployments: [{ provider: 'a' }, { provider: 'a' }] }),
      (error: unknown) => error instanceof ConfigError && /listed twice/.test(error.message),
    );
    assert.throws(attempt({ deployments: [] }), (error: unknown) => error instanceof ConfigError && /deployments/.test(error.message));
    assert.throws(
      attempt({ deployments: [{ provider: 'a', weight: 0 }] }),
      (error: unknown) => error instanceof ConfigError && /weight/.test(error.message),
    );
    assert.throws(
      attempt({ provider: 'a', routing: 'round-robin' }),
      (error: unknown) => error instanceof ConfigError && /routing/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ env: {}, overrides: { providers: { a: { ...providers.a, apiKeys: [{ env: 'MISSING_KEY' }] } } } }),
      (error: unknown) =>
        error instanceof ConfigError && /providers\.a\.apiKeys\[0\] names the environment variable MISSING_KEY/.test(error.message),
    );
  });

  test('apiKey: { file } reads the key from the file; a missing or empty file is a ConfigError naming its path', () => {
    const provider = { kind: 'openai-compatible' as const, baseUrl: 'http://127.0.0.1:1/v1' };
    const keyFile = writeTemp('upstream.key', '  sk-from-file\n');
    const second = writeTemp('second.key', 'sk-second\n');
    const loaded = loadConfig({
      env: { SECOND: 'sk-env' },
      overrides: {
        providers: {
          a: { ...provider, apiKey: { file: keyFile } },
          b: { kind: 'anthropic' as const, apiKeys: [{ env: 'SECOND' }, { file: second }] },
        },
      },
    });
    assert.equal(loaded.providers['a']!.apiKeyValue, 'sk-from-file');
    assert.equal(loaded.providers['a']!.apiKeyFile, keyFile);
    assert.deepEqual(loaded.providers['b']!.apiKeyValues, ['sk-env', 'sk-second']);
    assert.deepEqual(loaded.providers['b']!.apiKeyFiles, [undefined, second]);
    assert.equal(loaded.providers['b']!.apiKeyFile, undefined);
    const missing = join(tmpdir(), `switchyard-no-such-key-${process.pid}`);
    assert.throws(
      () => loadConfig({ env: {}, overrides: { providers: { a: { ...provider, apiKey: { file: missing } } } } }),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes(`providers.a.apiKey names the file ${missing}, which does not exist`),
    );
    const empty = writeTemp('empty.key', ' \n');
    assert.throws(
      () => loadConfig({ env: {}, overrides: { providers: { a: { ...provider, apiKeys: [{ file: empty }] } } } }),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes(`providers.a.apiKeys[0] names the file ${empty}, which is empty`),
    );
  });

  test('an unreadable or invalid config file is a ConfigError naming the file', () => {
    assert.throws(() => loadConfig({ env: { SWITCHYARD_CONFIG: '/nonexistent/c.yaml' } }), /\/nonexistent\/c\.yaml/);
    const broken = writeTemp('broken.json', '{ nope');
    assert.throws(() => loadConfig({ env: { SWITCHYARD_CONFIG: broken } }), /not valid JSON/);
  });
  test('FILES_STORE: local by default, postgres with a Postgres database, s3://bucket/prefix with the AWS variables; explicit beats env', () => {
    const local = loadConfig({ env: { DATA_DIR: '/srv/switchyard' } }).filesStore;
    assert.deepEqual(local, { kind: 'local', directory: '/srv/switchyard/files' });
    const postgres = loadConfig({ env: { FILES_STORE: 'postgres', DATABASE_URL: 'postgres://u@h/db' } }).filesStore;
    assert.deepEqual(postgres, { kind: 'postgres', databaseUrl: 'postgres://u@h/db' });
    const s3 = loadConfig({
      env: {
        FILES_STORE: 's3://my-bucket/switchyard/files/',
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9000',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'id',
        AWS_SECRET_ACCESS_KEY: 'secret',
      },
    }).filesStore;
    assert.deepEqual(s3, {
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'switchyard/files',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    const bare = loadConfig({ env: { FILES_STORE: 's3://bucket-only' } }).filesStore;
    assert.deepEqual(bare, {
      kind: 's3',
      bucket: 'bucket-only',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      credentials: undefined,
    });
    assert.equal(loadConfig({ env: { FILES_STORE: 's3://b-1' }, overrides: { filesStore: 'local' } }).filesStore.kind, 'local');
  });

  test('FILES_STORE mistakes are refused with a way out', () => {
    assert.throws(
      () => loadConfig({ env: { FILES_STORE: 'postgres' } }),
      (error: unknown) => error instanceof ConfigError && /database is SQLite.*DATABASE_URL=postgres/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ env: { FILES_STORE: 'nfs' } }),
      (error: unknown) => error instanceof ConfigError && /local, postgres or s3:\/\/bucket/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ env: { FILES_STORE: 's3://Bad_Bucket' } }),
      (error: unknown) => error instanceof ConfigError && /not a valid S3 bucket name/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ env: { FILES_STORE: 's3://bucket', AWS_ACCESS_KEY_ID: 'id' } }),
      (error: unknown) => error instanceof ConfigError && /both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ env: { FILES_STORE: 's3://bucket', AWS_ENDPOINT_URL: 'minio:9000' } }),
      (error: unknown) => error instanceof ConfigError && /AWS_ENDPOINT_URL/.test(error.message),
    );
  });

  test('balancer settings: PUBLIC_BASE_URL, TRUST_PROXY (boolean, hops or addresses) and DRAIN_DELAY_SECONDS', () => {
    const defaults = loadConfig({ env: {} }).server;
    assert.equal(defaults.publicBaseUrl, undefined);
    assert.equal(defaults.trustProxy, false);
    assert.equal(defaults.drainDelaySeconds, 0);
    const server = loadConfig({
      env: { PUBLIC_BASE_URL: 'https://ai.example.com', TRUST_PROXY: 'true', DRAIN_DELAY_SECONDS: '7.5' },
    }).server;
    assert.equal(server.publicBaseUrl, 'https://ai.example.com');
    assert.equal(server.trustProxy, true);
    assert.equal(server.drainDelaySeconds, 7.5);
    assert.equal(loadConfig({ env: { TRUST_PROXY: '2' } }).server.trustProxy, 2);
    assert.equal(loadConfig({ env: { TRUST_PROXY: '10.0.0.0/8,127.0.0.1' } }).server.trustProxy, '10.0.0.0/8,127.0.0.1');
    assert.throws(() => loadConfig({ env: { PUBLIC_BASE_URL: 'ai.example.com' } }), ConfigError);
    assert.throws(() => loadConfig({ env: { DRAIN_DELAY_SECONDS: 'soon' } }), /DRAIN_DELAY_SECONDS/);
  });
});
