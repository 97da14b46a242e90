// Plan and tier names from input never find an inherited property (issue 40, F5): `constructor`,
// `toString` and `__proto__` as a plan are a 400 naming `plan` (never a 500), with or without a
// permissions override, and no key ever lands on a tier named `constructor`; a key whose tier is
// unknown takes the plan's tier when the plan changes. Real server (SQLite), plus the tier lookups.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig, tierSettingsFor, unconfiguredTiers } from '../../src/config/index.ts';
import { DashboardClient } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];

describe('plan names from input', () => {
  let server: TestServer;
  let operator: DashboardClient;
  let key: { key: string; id: string };

  before(async () => {
    server = await startTestServer();
    key = await server.createKey({ organization: 'org-proto', tier: 'Free' });
    const issued = await server.runtime.people.createOperator('ops@proto.example', server.origin);
    operator = new DashboardClient(server.origin);
    const token = /#token=([A-Za-z0-9]+)$/.exec(issued.link)![1]!;
    assert.equal((await operator.request('POST', 'set-password', { token, password: PASSWORD }, { csrf: false })).status, 200);
    assert.equal((await operator.signIn('ops@proto.example', PASSWORD)).status, 200);
  });
  after(() => server.close());

  test('inherited names are unknown plans: 400 with param plan, with or without overrides', async () => {
    for (const name of NAMES) {
      const bare = await operator.request('POST', 'operator/organizations/org-proto/plan', { plan: name });
      assert.equal(bare.status, 400, `${name}: ${JSON.stringify(bare.body)}`);
      assert.equal(bare.body.error.param, 'plan');
      const overridden = await operator.request('POST', 'operator/organizations/org-proto/plan', {
        plan: name,
        overrides: { permissions: ['chat.completions', 'models'] },
      });
      assert.equal(overridden.status, 400, name);
      assert.equal(overridden.body.error.param, 'plan');
    }
    const shown = await operator.request('GET', 'operator/organizations/org-proto');
    assert.equal(shown.body.plan.tier, 'Free');
    const status = await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key.key}` } });
    assert.equal(((await status.json()) as { tier: string }).tier, 'Free', 'the key never moves to a tier named constructor');
  });

  test('a key cannot be created on an inherited tier name', async () => {
    for (const tier of NAMES) await assert.rejects(server.createKey({ organization: 'org-proto', tier }), /Unknown tier/);
  });

  test('tier lookups by name ignore inherited properties', () => {
    const config = loadConfig({ env: {}, overrides: { dataDir: server.dataDir } });
    for (const name of NAMES) {
      assert.equal(Object.getPrototypeOf(config.tiers), null);
      assert.equal(config.tiers[name], undefined);
      assert.deepEqual(tierSettingsFor(config, name), config.tiers[config.defaultTier]);
      assert.deepEqual(unconfiguredTiers(config, [name]), [name], `${name} is not a configured tier`);
    }
  });
});
