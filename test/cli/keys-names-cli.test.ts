// Key names in the operator's CLI (issue 40 item 10): `keys list` shows each key's name, `keys update
// --name` confirms the new name, and the operators' audit entry of the update says the name changed
// from what to what. Run as separate processes on a real SQLite database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { OperatorAuditRepository } from '../../src/db/repositories/operator-audit-repository.ts';
import { openMigratedDatabase } from '../../src/runtime.ts';
import { runCli } from '../support/run-cli.ts';

describe('key names in the CLI', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let id: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-key-names-'));
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const created = await runCli(['keys', 'create', '--org', 'org-names', '--create-org', '--name', 'ci runner', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    id = (JSON.parse(created.stdout) as { id: string }).id;
    const unnamed = await runCli(['keys', 'create', '--org', 'org-names'], env);
    assert.equal(unnamed.code, 0, unnamed.stderr);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('keys list shows the names (and says when a key has none)', async () => {
    const listed = await runCli(['keys', 'list', '--org', 'org-names'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(
      lines.find((line) => line.startsWith(id))!,
      new RegExp(`^${id}  \\S+  "ci runner"  org-names  Developer  active`),
    );
    assert.match(
      lines.find((line) => !line.startsWith(id))!,
      /^\S+ {2}\S+ {2}\(no name\) {2}org-names {2}/,
    );
  });

  test('keys update --name confirms the name and the operators’ audit log has the rename', async () => {
    const updated = await runCli(['keys', 'update', id, '--name', 'nightly batch'], env);
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, new RegExp(`^Updated ${id}: name "nightly batch", tier Developer, permissions `));
    const database = await openMigratedDatabase(loadConfig({ env }));
    try {
      const [entry] = await new OperatorAuditRepository(database.db).list({ limit: 1 });
      assert.equal(entry?.action, 'key.updated');
      assert.deepEqual((JSON.parse(entry!.detail!) as { name: unknown }).name, { from: 'ci runner', to: 'nightly batch' });
    } finally {
      await database.close();
    }
  });
});
