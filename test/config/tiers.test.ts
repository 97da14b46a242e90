// Tiers fail safe: overrides merge with the default tiers field by field, a config naming some tiers
// keeps the others, `null` removes one, a retired tier maps its keys to a named tier, and a start on a
// database whose keys use a tier the config dropped refuses with the names (real SQLite runtime).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { CLI_ACTOR } from '../../src/accounts/organizations.ts';
import { ConfigError, effectiveTiers, loadConfig, tierSettingsFor, type ConfigInput } from '../../src/config/index.ts';
import { DEFAULT_TIERS } from '../../src/config/schema.ts';
import { startRuntime } from '../../src/runtime.ts';

const load = (overrides: ConfigInput) => loadConfig({ env: {}, overrides });

describe('tier overrides', () => {
  test('one field of a default tier changes; its other fields and the other tiers stay', () => {
    const config = load({ tiers: { Developer: { requestsPerMinute: 5 } } });
    assert.deepEqual(Object.keys(config.tiers), ['Free', 'Developer', 'Production', 'Enterprise']);
    assert.equal(config.tiers['Developer']!.requestsPerMinute, 5);
    assert.equal(config.tiers['Developer']!.tokensPerDay, DEFAULT_TIERS['Developer']!.tokensPerDay);
    assert.deepEqual(config.tiers['Developer']!.permissions, DEFAULT_TIERS['Developer']!.permissions);
    assert.equal(config.tiers['Production']!.requestsPerMinute, DEFAULT_TIERS['Production']!.requestsPerMinute);
  });

  test('a new tier with every field is added beside the defaults', () => {
    const gold = {
      requestsPerMinute: 1,
      tokensPerMinute: 2,
      tokensPerDay: 3,
      tokensPerMonth: 4,
      concurrentBatches: 0,
      permissions: ['models' as const],
    };
    const config = load({ tiers: { Gold: gold } });
    assert.deepEqual(Object.keys(config.tiers), ['Free', 'Developer', 'Production', 'Enterprise', 'Gold']);
    // Defaults of the optional fields: no key cap, no storage quota, no organization-wide minute limits, no budget.
    assert.deepEqual(config.tiers['Gold'], {
      ...gold,
      moderateInputs: false,
      maxRequestsPerBatch: 50_000,
      maxActiveKeys: 0,
      storageQuotaBytes: 0,
      organizationRequestsPerMinute: 0,
      organizationTokensPerMinute: 0,
      budget: null,
    });
  });

  test('a plan budget in USD: at most 6 decimals, a known period', () => {
    const config = load({ tiers: { Developer: { budget: { period: 'week', amountUsd: 12.5 } } } });
    assert.deepEqual(config.tiers['Developer']!.budget, { period: 'week', amountUsd: 12.5 });
    assert.throws(
      () => load({ tiers: { Developer: { budget: { period: 'week', amountUsd: 0.0000001 } } } }),
      /tiers\.Developer\.budget\.amountUsd/,
    );
    assert.throws(
      () => load({ tiers: { Developer: { budget: { period: 'year' as never, amountUsd: 1 } } } }),
      /tiers\.Developer\.budget\.period/,
    );
  });

  test('a new tier missing fields: a config error naming them', () => {
    assert.throws(
      () => load({ tiers: { Gold: { requestsPerMinute: 1 } } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /^tiers\.Gold is a new tier, so it needs every field \(missing: tokensPerMinute, tokensPerDay, tokensPerMonth, concurrentBatches, permissions\)/.test(
          error.message,
        ),
    );
  });

  test('a wrong field type is still reported with its path', () => {
    assert.throws(() => load({ tiers: { Free: { requestsPerMinute: -1 } } }), /tiers\.Free\.requestsPerMinute/);
  });

  test('null removes a tier; defaultTier must stay configured', () => {
    const config = load({ tiers: { Enterprise: null } });
    assert.deepEqual(Object.keys(config.tiers), ['Free', 'Developer', 'Production']);
    assert.throws(() => load({ tiers: { Developer: null } }), /defaultTier "Developer" is not one of the configured tiers/);
  });

  test('retiredTiers: a removed tier takes a named tier’s settings; it must be removed and the target configured', () => {
    const config = load({ tiers: { Production: null }, retiredTiers: { Production: 'Developer' } });
    assert.ok(!('Production' in config.tiers), 'not assignable to new keys');
    assert.equal(effectiveTiers(config)['Production'], config.tiers['Developer']);
    assert.equal(tierSettingsFor(config, 'Production'), config.tiers['Developer']);
    assert.throws(
      () => load({ retiredTiers: { Production: 'Developer' } }),
      /retiredTiers\.Production: "Production" is still a configured tier/,
    );
    assert.throws(
      () => load({ tiers: { Production: null }, retiredTiers: { Production: 'Gold' } }),
      /retiredTiers\.Production names "Gold", which is not a configured tier/,
    );
  });

  test('a tier unknown to this config (another instance’s) gets the default tier’s settings, never none', () => {
    const config = load({});
    assert.equal(tierSettingsFor(config, 'Platinum'), config.tiers['Developer']);
  });
});

describe('start-up with keys of a dropped tier', () => {
  test('refuses with the names and both ways out; retiredTiers or keeping the tier starts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-dropped-tiers-'));
    const logger = pino({ level: 'silent' });
    const options = { logger, batchWorker: false as const, bootstrapKey: false };
    try {
      const first = await startRuntime(load({ dataDir }), options);
      // The organization's plan is its first key's tier, and later keys stay within it (issue 31).
      await first.keys.create({ tier: 'Enterprise', name: 'ent' });
      await first.keys.create({ tier: 'Production', name: 'prod' });
      const revoked = await first.keys.create({ tier: 'Free', name: 'gone' });
      await first.keys.revoke(revoked.record.id);
      await first.close();

      await assert.rejects(
        startRuntime(load({ dataDir, tiers: { Production: null, Enterprise: null, Free: null } }), options),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith(
            'Existing keys use the tiers "Enterprise", "Production", which the config no longer defines (configured: Developer).',
          ) &&
          error.message.includes('retiredTiers: { Enterprise: Developer }'),
      );
      const mapped = await startRuntime(
        load({
          dataDir,
          tiers: { Production: null, Enterprise: null, Free: null },
          retiredTiers: { Production: 'Developer', Enterprise: 'Developer' },
        }),
        options,
      );
      await mapped.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('start-up with an organization whose plan is a dropped tier (issue 40 item 5)', () => {
  test('refuses naming the organizations, even when no key has the tier; retiredTiers maps the plan', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-dropped-plans-'));
    const logger = pino({ level: 'silent' });
    const options = { logger, batchWorker: false as const, bootstrapKey: false };
    try {
      const first = await startRuntime(load({ dataDir }), options);
      // As in the trial: org-acme's plan is Production, its only key Developer.
      await first.keys.create({ tier: 'Developer', name: 'dev', organization: 'org-acme' });
      await first.organizations.setPlan('org-acme', 'Production', null, CLI_ACTOR);
      await first.keys.create({ tier: 'Developer', name: 'dev', organization: 'org-beta' });
      await first.organizations.setPlan('org-beta', 'Production', null, CLI_ACTOR);
      await first.close();

      const refusal = (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(
          'Organizations have the plan "Production" (org-acme, org-beta), which the config no longer defines (configured: Free, Developer, Enterprise).',
        ) &&
        error.message.includes('retiredTiers: { Production: ');
      await assert.rejects(startRuntime(load({ dataDir, tiers: { Production: null } }), options), refusal);
      // A higher default tier would have raised their limits silently: refused as well.
      await assert.rejects(startRuntime(load({ dataDir, tiers: { Production: null }, defaultTier: 'Enterprise' }), options), refusal);

      const mapped = await startRuntime(
        load({ dataDir, tiers: { Production: null }, defaultTier: 'Enterprise', retiredTiers: { Production: 'Developer' } }),
        options,
      );
      try {
        // The retired plan takes its replacement's figures, not the (higher) default tier's.
        const plan = await mapped.organizations.planOf('org-acme');
        assert.equal(plan?.tier, 'Developer');
        assert.equal(plan?.requestsPerMinute, mapped.config.tiers['Developer']!.requestsPerMinute);
      } finally {
        await mapped.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
