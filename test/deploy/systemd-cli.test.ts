// The CLI on a systemd install (issue 40 item 8): deploy/switchyard runs it with the unit's environment
// (the unit's Environment= values, then its EnvironmentFile= over them, as systemd does), so it works on
// the service's database; `--environment-file` / SWITCHYARD_ENV_FILE read that file; and a command that only
// reads (keys list, orgs show, orgs list, owners list, usage) never creates a new, empty database.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { runCli } from '../support/run-cli.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const UNIT = readFileSync(join(REPOSITORY, 'deploy/switchyard.service'), 'utf8');
const WRAPPER = join(REPOSITORY, 'deploy/switchyard');
/** Unit settings only the service process uses (memory tuning, the stop's drain). */
const SERVICE_ONLY = new Set(['MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_', 'DRAIN_DELAY_SECONDS']);

const run = promisify(execFile);
async function runWrapper(args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const result = await run(WRAPPER, args, { env: { PATH: process.env['PATH'], ...env } });
    return { stdout: result.stdout, stderr: result.stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

describe('the CLI with the systemd unit’s environment', () => {
  let folder: string;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'switchyard-systemd-cli-'));
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  test('deploy/switchyard sets every Environment= value of the unit and reads the same EnvironmentFile=', () => {
    const wrapper = readFileSync(WRAPPER, 'utf8');
    const settings = [...UNIT.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((match) => [match[1]!, match[2]!] as const);
    assert.ok(settings.some(([name]) => name === 'DATA_DIR'));
    for (const [name, value] of settings)
      if (!SERVICE_ONLY.has(name)) assert.ok(wrapper.includes(` ${name}=${value}`), `deploy/switchyard sets ${name}=${value}`);
    const environmentFile = /^EnvironmentFile=-?(.*)$/m.exec(UNIT)?.[1];
    assert.ok(environmentFile !== undefined);
    assert.ok(wrapper.includes(`:-${environmentFile}}`), `deploy/switchyard reads ${environmentFile}`);
  });

  test('the wrapper works on the database the environment file names, over the unit’s DATA_DIR', async () => {
    // An install folder whose bin/switchyard.js runs this checkout's CLI (through tsx: no build needed).
    const install = join(folder, 'opt');
    mkdirSync(join(install, 'bin'), { recursive: true });
    writeFileSync(
      join(install, 'bin/switchyard.js'),
      `import { main } from ${JSON.stringify(pathToFileURL(join(REPOSITORY, 'src/main.ts')).href)};\n` +
        `main(process.argv.slice(2)).catch((error) => { process.stderr.write(String(error?.message ?? error) + '\\n'); process.exit(1); });\n`,
    );
    const state = join(folder, 'state');
    const environmentFile = join(folder, 'switchyard.env');
    writeFileSync(environmentFile, `# as in /etc/switchyard/switchyard.env\nDATA_DIR=${state}\nLOG_LEVEL=silent\n`);
    const env = {
      SWITCHYARD_INSTALL_DIR: install,
      SWITCHYARD_NODE: process.execPath,
      SWITCHYARD_ENV_FILE: environmentFile,
      NODE_OPTIONS: `--import ${pathToFileURL(join(REPOSITORY, 'node_modules/tsx/dist/loader.mjs')).href}`,
    };
    const created = await runWrapper(['keys', 'create', '--org', 'org-unit', '--create-org', '--name', 'unit-key', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.ok(existsSync(join(state, 'switchyard.db')), 'the database is where the environment file says');
    assert.ok(!existsSync(join(install, 'data')), 'nothing is made in the install folder');
    const listed = await runWrapper(['keys', 'list', '--org', 'org-unit', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal((JSON.parse(listed.stdout) as unknown[]).length, 1);
  });

  test('--environment-file and SWITCHYARD_ENV_FILE: the file’s values go over the environment’s', async () => {
    const state = join(folder, 'flag-state');
    const environmentFile = join(folder, 'flag.env');
    writeFileSync(environmentFile, `DATA_DIR="${state}"\n`);
    const created = await runCli(['keys', 'create', '--org', 'org-flag', '--create-org', '--environment-file', environmentFile], {
      DATA_DIR: join(folder, 'elsewhere'),
      LOG_LEVEL: 'silent',
    });
    assert.equal(created.code, 0, created.stderr);
    assert.ok(existsSync(join(state, 'switchyard.db')));
    assert.ok(!existsSync(join(folder, 'elsewhere')));
    const shown = await runCli(['orgs', 'show', 'org-flag'], { SWITCHYARD_ENV_FILE: environmentFile, LOG_LEVEL: 'silent' });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^org-flag: active, plan Developer/);
    const unreadable = await runCli(['keys', 'list', '--environment-file', join(folder, 'missing.env')], { LOG_LEVEL: 'silent' });
    assert.equal(unreadable.code, 1);
    assert.match(unreadable.stderr, /^Cannot read the environment file .*missing\.env \(ENOENT\)/);
  });

  for (const args of [
    ['keys', 'list'],
    ['orgs', 'show', 'org-acme'],
    ['orgs', 'list'],
    ['owners', 'list', '--org', 'org-acme'],
    ['usage', '--all'],
  ]) {
    test(`\`${args.join(' ')}\` without the service's database refuses in one sentence and creates none`, async () => {
      const dataDir = join(folder, `empty-${args.join('-')}`);
      const result = await runCli(args, { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        /^There is no database at .*switchyard\.db \(DATA_DIR=.*\), and this command only reads, so it does not create one\./,
      );
      assert.match(result.stderr, /--environment-file \/etc\/switchyard\/switchyard\.env/);
      assert.equal(result.stderr.trim().split('\n').length, 1);
      assert.ok(!existsSync(dataDir), 'no data folder was made');
    });
  }
});
