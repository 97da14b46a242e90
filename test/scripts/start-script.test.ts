import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

const START_SCRIPT = new URL('../../scripts/start.mjs', import.meta.url).pathname;

/**
 * `npm start` (scripts/start.mjs) in a throwaway project: its "build" only counts itself and writes
 * the stamp, and its compiled entry point prints the flags it was started with and exits.
 */
describe('npm start: builds only when a source changed since the last build', () => {
  const project = mkdtempSync(join(tmpdir(), 'switchyard-start-'));
  after(() => rmSync(project, { recursive: true, force: true }));
  mkdirSync(join(project, 'src'));
  mkdirSync(join(project, 'dist/src'), { recursive: true });
  writeFileSync(join(project, 'src/main.ts'), 'export {};\n');
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'start-script-test',
      private: true,
      scripts: {
        build: `node -e "const fs = require('fs'); fs.appendFileSync('builds.log', 'build\\n'); fs.writeFileSync('dist/.build-complete', '')"`,
      },
    }),
  );
  writeFileSync(
    join(project, 'dist/src/main.js'),
    'console.log(JSON.stringify({ execArgv: process.execArgv, args: process.argv.slice(2), trim: process.env.MALLOC_TRIM_THRESHOLD_ ?? null }));\n',
  );

  const builds = (): number =>
    existsSync(join(project, 'builds.log')) ? readFileSync(join(project, 'builds.log'), 'utf8').split('\n').length - 1 : 0;
  const start = (env: NodeJS.ProcessEnv = {}): { execArgv: string[]; args: string[]; trim: string | null } => {
    const result = spawnSync(process.execPath, [START_SCRIPT, '--port', '1'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { execArgv: string[]; args: string[]; trim: string | null };
  };
  /** Sets a file's modification time `secondsAgo` seconds in the past. */
  const age = (path: string, secondsAgo: number): void => {
    const when = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(project, path), when, when);
  };

  test('no stamp yet: it builds, then starts the service with its memory settings', () => {
    const started = start();
    assert.equal(builds(), 1);
    assert.deepEqual(started.args, ['serve', '--port', '1']);
    assert.deepEqual(started.execArgv, ['--max-semi-space-size=8', '--heap-growing-percent=50']);
    assert.equal(started.trim, '131072');
  });

  test('nothing changed: no build', () => {
    start();
    assert.equal(builds(), 1);
  });

  test('a source changed after the build, while the compiled entry point stayed older: it builds once, then not again', () => {
    // An incremental compiler leaves an unchanged output with its old time; only the stamp says a build ran.
    age('dist/src/main.js', 3600);
    age('dist/.build-complete', 60);
    age('src/main.ts', 30);
    start();
    assert.equal(builds(), 2);
    start();
    assert.equal(builds(), 2);
  });

  test("the operator's NODE_OPTIONS flag and malloc setting win over the defaults", () => {
    const started = start({ NODE_OPTIONS: '--max-semi-space-size=32', MALLOC_TRIM_THRESHOLD_: '999' });
    assert.deepEqual(started.execArgv, ['--heap-growing-percent=50']);
    assert.equal(started.trim, '999');
  });
});
