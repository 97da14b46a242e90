// The `alerts` config section (config/alerts-config.ts): safe defaults (HTTPS to public hosts, 10 s per
// attempt, retries from 10 s doubling to an hour for a day), the ALERT_* variables, a file and the
// environment merged field by field one level down, and refusals that say what to set.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

function alertsOf(env: NodeJS.ProcessEnv, configFile?: string) {
  return loadConfig({ env, ...(configFile === undefined ? {} : { configFile }), overrides: { dataDir: tmpdir() } }).alerts;
}

describe('alerts config', () => {
  test('defaults', () => {
    assert.deepEqual(alertsOf({}), {
      projectedMinElapsedPercent: 10,
      emails: true,
      webhooks: { allowHttp: false, allowPrivateAddresses: false, timeoutMs: 10_000, maxEndpointsPerOrganization: 10 },
      delivery: {
        firstRetryMs: 10_000,
        maxRetryMs: 3_600_000,
        retryForMs: 86_400_000,
        pollMs: 1_000,
        concurrency: 4,
        leaseMs: 60_000,
        keepDays: 30,
      },
    });
  });

  test('the ALERT_* variables, merged over a file field by field', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'switchyard-alerts-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ alerts: { webhooks: { timeoutMs: 5_000, maxEndpointsPerOrganization: 3 }, delivery: { concurrency: 8 } } }),
    );
    const key = randomBytes(32).toString('base64');
    const alerts = alertsOf(
      {
        ALERT_EMAILS: 'off',
        ALERT_WEBHOOKS_ALLOW_HTTP: 'on',
        ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: 'true',
        ALERT_WEBHOOK_SECRETS_KEY: key,
        ALERT_RETRY_FIRST_MS: '100',
        ALERT_RETRY_MAX_MS: '1000',
        ALERT_RETRY_FOR_MS: '60000',
        ALERT_DELIVERY_POLL_MS: '50',
      },
      file,
    );
    assert.equal(alerts.emails, false);
    assert.deepEqual(alerts.webhooks, {
      allowHttp: true,
      allowPrivateAddresses: true,
      timeoutMs: 5_000,
      maxEndpointsPerOrganization: 3,
      secretsKey: key,
    });
    assert.deepEqual(
      [
        alerts.delivery.firstRetryMs,
        alerts.delivery.maxRetryMs,
        alerts.delivery.retryForMs,
        alerts.delivery.pollMs,
        alerts.delivery.concurrency,
      ],
      [100, 1_000, 60_000, 50, 8],
    );
  });

  test('values that cannot work are refused with what to set', () => {
    assert.throws(
      () => alertsOf({ ALERT_WEBHOOKS_ALLOW_HTTP: 'sometimes' }),
      (error: Error) => error instanceof ConfigError && /ALERT_WEBHOOKS_ALLOW_HTTP=on/.test(error.message),
    );
    assert.throws(() => alertsOf({ ALERT_RETRY_FIRST_MS: '1.5s' }), /ALERT_RETRY_FIRST_MS=1\.5s is not an integer/);
    assert.throws(() => alertsOf({ ALERT_WEBHOOK_SECRETS_KEY: 'too-short' }), /openssl rand -base64 32/);
    assert.throws(
      () => alertsOf({ ALERT_WEBHOOK_TIMEOUT_MS: '40000' }),
      /alerts\.delivery\.leaseMs: must be at least twice alerts\.webhooks\.timeoutMs \(80000\)/,
    );
    assert.throws(() => alertsOf({ ALERT_RETRY_FIRST_MS: '5000', ALERT_RETRY_MAX_MS: '1000' }), /alerts\.delivery\.maxRetryMs/);
  });
});
