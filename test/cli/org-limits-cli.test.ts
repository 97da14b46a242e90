// The key cap and the storage quota from the operator's CLI, as separate processes on a running
// server's database: `orgs set-plan --overrides` sets both, `orgs show` prints them with what is used,
// and `keys create` past the cap fails with the plan's one-line refusal (exit code 2).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('key cap and storage quota in the CLI', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await startTestServer();
    env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    await server.createKey({ organization: 'org-capped-cli', tier: 'Developer' });
  });
  after(async () => server?.close());

  test('set-plan sets the cap and the quota; show prints them; keys create past the cap is refused', async () => {
    const moved = await runCli(
      ['orgs', 'set-plan', 'org-capped-cli', '--plan', 'Developer', '--overrides', '{"maxActiveKeys":2,"storageQuotaBytes":5000000}'],
      env,
    );
    assert.equal(moved.code, 0, moved.stderr);
    const shown = await runCli(['orgs', 'show', 'org-capped-cli'], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /active keys 1 of 2, stored bytes 0 of 5000000/);

    const second = await runCli(['keys', 'create', '--org', 'org-capped-cli', '--tier', 'Developer', '--json'], env);
    assert.equal(second.code, 0, second.stderr);
    const third = await runCli(['keys', 'create', '--org', 'org-capped-cli', '--tier', 'Developer'], env);
    assert.notEqual(third.code, 0);
    assert.match(third.stderr, /2 active API keys, the most its plan \(Developer\) allows \(2\)/);
    assert.equal((await server.runtime.keys.allowance('org-capped-cli')).active, 2);

    const negative = await runCli(
      ['orgs', 'set-plan', 'org-capped-cli', '--plan', 'Developer', '--overrides', '{"storageQuotaBytes":-5}'],
      env,
    );
    assert.notEqual(negative.code, 0);
    assert.match(negative.stderr, /storageQuotaBytes must be a whole number of at least 0/);
  });
});
