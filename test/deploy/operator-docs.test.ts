// What the README and the deploy files tell an operator to run works as written (issue 40 item 10):
// the compose `keys create` command on a fresh database, the SQLite online backup in a folder without
// `backup/`, CLI links that say when they were built from the CLI's own HOST/PORT, the systemd unit's
// hardening (verified by systemd-analyze where it is installed), and compose.yaml's PUBLIC_BASE_URL
// comment.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { runCli } from '../support/run-cli.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(REPOSITORY, 'README.md'), 'utf8');
const run = promisify(execFile);

describe('operator documentation runs as written', () => {
  let folder: string;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'switchyard-operator-docs-'));
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  test('the compose `keys create` command works on a fresh database', async () => {
    const line = /^docker compose exec switchyard-a node bin\/switchyard\.js (keys create .*)$/m.exec(README)?.[1];
    assert.ok(line !== undefined, 'README has the compose keys create command');
    const created = await runCli(line.split(/\s+/), { DATA_DIR: join(folder, 'compose'), LOG_LEVEL: 'silent' });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^Created key \S+ \(organization org-acme, /);
  });

  test('the SQLite online backup block works in a folder without backup/, with DATA_DIR as a systemd install has it', async () => {
    const block = /- \*\*SQLite \(the default\)\*\*[\s\S]*?```sh\n([\s\S]*?)```/.exec(README)?.[1];
    assert.ok(block !== undefined, 'README has the SQLite backup block');
    const dataDir = join(folder, 'state');
    const seeded = await runCli(['keys', 'create', '--org', 'org-backup', '--create-org'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    assert.equal(seeded.code, 0, seeded.stderr);
    const work = join(folder, 'install');
    await run('mkdir', ['-p', work]);
    // Run where better-sqlite3 resolves (the install folder's node_modules), as the README says.
    const { stdout } = await run('sh', ['-e', '-c', block.replace(/^\s+/gm, '')], {
      cwd: work,
      env: { PATH: process.env['PATH'], DATA_DIR: dataDir, NODE_PATH: join(REPOSITORY, 'node_modules') },
    });
    assert.match(stdout, /done/);
    const copy = new Database(join(work, 'backup/switchyard.db'), { readonly: true });
    try {
      assert.equal((copy.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
      assert.equal(
        (copy.prepare("SELECT count(*) AS total FROM api_keys WHERE organization_id = 'org-backup'").get() as { total: number }).total,
        1,
      );
    } finally {
      copy.close();
    }
  });

  test('a CLI link built from the CLI’s own HOST and PORT says so and where to set the address', async () => {
    const env = { DATA_DIR: join(folder, 'links'), LOG_LEVEL: 'silent', PORT: '9311' };
    const plain = await runCli(['operators', 'create', '--email', 'ops@links.example'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^http:\/\/127\.0\.0\.1:9311\/dashboard\/set-password#/m);
    assert.match(
      plain.stdout,
      /The link uses http:\/\/127\.0\.0\.1:9311, this command's own HOST and PORT: .*set PUBLIC_BASE_URL .* or pass --base-url\./,
    );
    const publicAddress = await runCli(['operators', 'create', '--email', 'ops2@links.example'], {
      ...env,
      PUBLIC_BASE_URL: 'https://ai.example.com',
    });
    assert.equal(publicAddress.code, 0, publicAddress.stderr);
    assert.match(publicAddress.stdout, /^https:\/\/ai\.example\.com\/dashboard\/set-password#/m);
    assert.doesNotMatch(publicAddress.stdout, /The link uses/);
  });

  test('the systemd unit is hardened further, and systemd-analyze accepts it', async () => {
    const unit = readFileSync(join(REPOSITORY, 'deploy/switchyard.service'), 'utf8');
    for (const directive of [
      'UMask=0077',
      'CapabilityBoundingSet=',
      'SystemCallFilter=@system-service',
      'SystemCallArchitectures=native',
      'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK',
      'RestrictNamespaces=yes',
      'ProtectKernelLogs=yes',
    ])
      assert.match(unit, new RegExp(`^${directive.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'), directive);
    assert.doesNotMatch(unit, /^MemoryDenyWriteExecute=yes/m, 'V8 needs W+X memory');
    if (!existsSync('/usr/bin/systemd-analyze')) {
      console.warn('\n*** SKIPPED: systemd-analyze not installed; the unit was not verified ***\n');
      return;
    }
    // Unknown or misspelt directives are reported on stderr ("Unknown key name ..."), whatever the exit code.
    const verified = await run('systemd-analyze', ['verify', '--man=no', join(REPOSITORY, 'deploy/switchyard.service')]).then(
      (result) => result.stderr,
      (error: { stderr: string }) => error.stderr,
    );
    assert.doesNotMatch(verified, /Unknown key|Unknown section|Failed to parse|Invalid/i, verified);
  });

  test('compose.yaml says why both instances share one PUBLIC_BASE_URL', () => {
    const compose = readFileSync(join(REPOSITORY, 'compose.yaml'), 'utf8');
    assert.match(compose, /#[^\n]*ONE\n\s*# address for every instance, the balancer's[\s\S]*?\n\s*PUBLIC_BASE_URL: /);
  });
});
