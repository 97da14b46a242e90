import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cpuBudget, serviceNodeFlags } from '../../scripts/service-memory.mjs';

const canPin = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

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
  // The build tools' presence is what tells a development checkout from a production install (which
  // has TypeScript, a peer of node-llama-cpp, but not the dashboard bundler).
  const buildTool = join(project, 'node_modules/esbuild');
  mkdirSync(join(project, 'node_modules/typescript/bin'), { recursive: true });
  writeFileSync(join(project, 'node_modules/typescript/bin/tsc'), '');
  mkdirSync(buildTool);
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
  /** Runs scripts/start.mjs in the project; `pinned`: under `taskset -c 0`, as a service with one CPU. */
  const launch = (env: NodeJS.ProcessEnv = {}, pinned = false) => {
    const command = [process.execPath, START_SCRIPT, '--port', '1'];
    const [file, ...args] = pinned ? ['taskset', '-c', '0', ...command] : command;
    return spawnSync(file!, args, { cwd: project, encoding: 'utf8', env: { ...process.env, ...env } });
  };
  const start = (env: NodeJS.ProcessEnv = {}, pinned = false): { execArgv: string[]; args: string[]; trim: string | null } => {
    const result = launch(env, pinned);
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { execArgv: string[]; args: string[]; trim: string | null };
  };
  /** Sets a file's modification time `secondsAgo` seconds in the past. */
  const age = (path: string, secondsAgo: number): void => {
    const when = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(project, path), when, when);
  };

  test('no stamp yet: it builds, then starts the service with its memory settings', () => {
    const started = start({ PARALLEL_SCAVENGE: 'on' });
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

  test('a production install (no build tools): never builds, runs the existing dist/ and says why', () => {
    rmSync(buildTool, { recursive: true });
    try {
      age('dist/.build-complete', 60);
      age('src/main.ts', 30);
      const result = launch();
      assert.equal(result.status, 0, result.stderr);
      assert.equal(builds(), 2);
      assert.match(
        result.stderr,
        /src\/ is newer than dist\/, but the build tools are not installed \(production install\): running the existing dist\//,
      );
      assert.deepEqual((JSON.parse(result.stdout.trim()) as { args: string[] }).args, ['serve', '--port', '1']);
      // Without src/ at all (a packed install) there is nothing to compare: no build, no message.
      renameSync(join(project, 'src'), join(project, 'src-away'));
      const packed = launch();
      assert.equal(packed.status, 0, packed.stderr);
      assert.equal(packed.stderr, '');
      renameSync(join(project, 'src-away'), join(project, 'src'));
    } finally {
      mkdirSync(buildTool, { recursive: true });
    }
    // As after a build, for the tests that follow.
    age('dist/.build-complete', 0);
  });

  test("the operator's NODE_OPTIONS flag and malloc setting win over the defaults", () => {
    const started = start({ NODE_OPTIONS: '--max-semi-space-size=32', MALLOC_TRIM_THRESHOLD_: '999', PARALLEL_SCAVENGE: 'on' });
    assert.deepEqual(started.execArgv, ['--heap-growing-percent=50']);
    assert.equal(started.trim, '999');
  });

  test('PARALLEL_SCAVENGE=off: young-generation collections on the main thread alone', () => {
    assert.deepEqual(start({ PARALLEL_SCAVENGE: 'off' }).execArgv, [
      '--max-semi-space-size=8',
      '--heap-growing-percent=50',
      '--no-parallel-scavenge',
    ]);
  });

  test('PARALLEL_SCAVENGE=auto on one CPU (taskset): parallel scavenging off', { skip: !canPin && 'taskset is not available here' }, () => {
    assert.ok(start({ PARALLEL_SCAVENGE: 'auto' }, true).execArgv.includes('--no-parallel-scavenge'));
    assert.ok(!start({ PARALLEL_SCAVENGE: 'on' }, true).execArgv.includes('--no-parallel-scavenge'));
  });

  test('an unknown PARALLEL_SCAVENGE value: a clear message and exit 1, nothing started', () => {
    const result = launch({ PARALLEL_SCAVENGE: 'yes' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /PARALLEL_SCAVENGE must be one of auto, on, off; got 'yes'/);
    assert.equal(result.stdout, '');
  });
});

describe('the service flags for a CPU budget', () => {
  test('auto: parallel scavenging with more than one CPU, not with one', () => {
    assert.ok(!serviceNodeFlags(2, 'auto').includes('--no-parallel-scavenge'));
    assert.ok(!serviceNodeFlags(16, 'auto').includes('--no-parallel-scavenge'));
    assert.deepEqual(serviceNodeFlags(1, 'auto'), ['--max-semi-space-size=8', '--heap-growing-percent=50', '--no-parallel-scavenge']);
  });

  test('on and off win over the CPU count', () => {
    assert.ok(!serviceNodeFlags(1, 'on').includes('--no-parallel-scavenge'));
    assert.ok(serviceNodeFlags(8, 'off').includes('--no-parallel-scavenge'));
  });

  test('the CPU budget is at least one and at most the CPUs this process may run on', () => {
    const budget = cpuBudget();
    assert.ok(Number.isInteger(budget) && budget >= 1 && budget <= availableParallelism(), String(budget));
  });
});
