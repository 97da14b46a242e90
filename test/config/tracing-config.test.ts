// The `tracing` section: read from the standard OTEL_* variables (through loadConfig's env, never
// process.env), merged with the file, validated with messages that say what to set.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { samplerOf } from '../../src/telemetry/otel-tracing.ts';

function tracingOf(env: NodeJS.ProcessEnv, configFile?: string) {
  return loadConfig({ env, ...(configFile === undefined ? {} : { configFile }), overrides: { dataDir: tmpdir() } }).tracing;
}

describe('tracing config', () => {
  test('off by default, service switchyard, the parent-based always-on sampler, OTLP/HTTP protobuf', () => {
    assert.deepEqual(tracingOf({}), {
      serviceName: 'switchyard',
      sampler: 'parentbased_always_on',
      headers: {},
      protocol: 'http/protobuf',
    });
  });

  test('OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces appended; the traces endpoint is used as given and wins', () => {
    assert.equal(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).endpoint, 'http://collector:4318/v1/traces');
    assert.equal(
      tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/x' })
        .endpoint,
      'https://otlp.example.com/x',
    );
  });

  test('service name, sampler, ratio and export headers from the environment', () => {
    const tracing = tracingOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'gateway-eu',
      OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant=blue',
    });
    assert.equal(tracing.serviceName, 'gateway-eu');
    assert.equal(tracing.sampler, 'parentbased_traceidratio');
    assert.equal(tracing.samplerArg, 0.25);
    assert.deepEqual(tracing.headers, { authorization: 'Bearer abc', 'x-tenant': 'blue' });
    assert.match(samplerOf(tracing).toString(), /ParentBased\{root=TraceIdRatioBased\{0\.25\}/);
  });

  test('the exporter and batch settings from the environment (the traces-specific variable wins)', () => {
    const tracing = tracingOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'GZIP',
      OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500',
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '256',
      OTEL_BSP_EXPORT_TIMEOUT: '15000',
    });
    assert.equal(tracing.compression, 'gzip');
    assert.equal(tracing.timeoutMillis, 2500);
    assert.equal(tracing.scheduleDelayMillis, 1000);
    assert.equal(tracing.maxQueueSize, 4096);
    assert.equal(tracing.maxExportBatchSize, 256);
    assert.equal(tracing.exportTimeoutMillis, 15000);
  });

  test('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off whatever the endpoint', () => {
    assert.equal(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).endpoint, undefined);
    assert.equal(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).endpoint, undefined);
  });

  test('the file sets the section; the environment overrides field by field', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'switchyard-tracing-')), 'config.json');
    writeFileSync(file, JSON.stringify({ tracing: { endpoint: 'http://file:4318/v1/traces', serviceName: 'from-file' } }));
    assert.deepEqual(
      { endpoint: tracingOf({}, file).endpoint, serviceName: tracingOf({}, file).serviceName },
      { endpoint: 'http://file:4318/v1/traces', serviceName: 'from-file' },
    );
    const merged = tracingOf({ OTEL_TRACES_SAMPLER: 'always_on' }, file);
    assert.equal(merged.endpoint, 'http://file:4318/v1/traces');
    assert.equal(merged.sampler, 'always_on');
  });

  test('bad values stop the start with a message naming the variable', () => {
    const bad: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ OTEL_TRACES_SAMPLER: 'sometimes' }, /tracing\.sampler/],
      [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, /OTEL_TRACES_SAMPLER_ARG=half is not a number/],
      [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, /tracing\.samplerArg/],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /tracing\.endpoint/],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported/],
      [{ OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' }, /OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/],
      [{ OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' }, /OTEL_EXPORTER_OTLP_COMPRESSION=zstd is not supported/],
      [{ OTEL_BSP_MAX_QUEUE_SIZE: 'lots' }, /OTEL_BSP_MAX_QUEUE_SIZE=lots is not a positive whole number/],
      [{ OTEL_EXPORTER_OTLP_TIMEOUT: '0' }, /OTEL_EXPORTER_OTLP_TIMEOUT=0 is not a positive whole number/],
    ];
    for (const [env, message] of bad)
      assert.throws(
        () => tracingOf(env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
  });
});
