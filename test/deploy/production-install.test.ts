// The production install, as the Dockerfile's last stages do it (docker build cannot run here): the
// package's manifest, lockfile, scripts/ and bin/ in an empty folder, `npm ci --omit=dev` from the
// lockfile (the npm registry is the only network it needs), the built dist/ added, then the service
// started as an unprivileged user (`nobody`) with nothing else: it must answer /readyz, print its first
// key, serve it, and drain on SIGTERM; `npm start` there must not build. The install takes minutes (the
// figures are printed). Also: the systemd unit passes `systemd-analyze verify` (skipped LOUDLY where
// the command is missing), and the Dockerfile and compose.yaml say what README "Production install" says.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../support/free-port.ts';
import { until } from '../support/until.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
/** Development dependencies that must not be in a production install (TypeScript is: node-llama-cpp's peer). */
const DEVELOPMENT_ONLY = ['tsx', 'eslint', 'playwright-core', 's3rver', 'openai', '@langchain/core', 'esbuild', 'prettier'];

/** The repository's dist/ is current (built after every source change), else it is built now. */
function ensureBuilt(): void {
  const stamp = join(REPOSITORY, 'dist/.build-complete');
  const newest = (path: string): number => {
    const stat = statSync(path);
    if (!stat.isDirectory()) return stat.mtimeMs;
    return Math.max(
      stat.mtimeMs,
      ...execFileSync('ls', ['-A', path], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((entry) => newest(join(path, entry))),
    );
  };
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= newest(join(REPOSITORY, 'src'))) return;
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: REPOSITORY, stdio: 'inherit' });
  assert.equal(build.status, 0, 'npm run build');
}

/**
 * A folder holding better-sqlite3's prebuild tarball for this Node, named as prebuild-install's download
 * would be (`better-sqlite3-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`), made from the binary in
 * this checkout's node_modules.
 */
function localPrebuilds(): string {
  const folder = mkdtempSync(join(tmpdir(), 'switchyard-prebuilds-'));
  const packageFolder = join(REPOSITORY, 'node_modules/better-sqlite3');
  const version = (JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8')) as { version: string }).version;
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(folder, name), '-C', packageFolder, 'build/Release/better_sqlite3.node']);
  chmodSync(folder, 0o755);
  return folder;
}

/** uid/gid of `nobody`, or undefined when this process cannot switch users (not root). */
function nobody(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/**
 * Signals a process group; a group already gone (a start that failed, whose own error is the one to
 * see) is no error.
 */
function signalGroupIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

describe('production install: npm ci --omit=dev plus the built dist/, run as a non-root user', () => {
  let install: string;
  before(() => {
    install = mkdtempSync(join(tmpdir(), 'switchyard-production-'));
    chmodSync(install, 0o755);
  });
  after(() => rmSync(install, { recursive: true, force: true }));

  // The bound only keeps a broken run from hanging: `npm ci` compiles better-sqlite3, which took 19 min
  // on a shared 2-core machine (5 min when idle), so a busy machine must not fail the test.
  test('installs without development dependencies and serves as nobody', { timeout: 45 * 60_000 }, async () => {
    // The Dockerfile's production-dependencies stage.
    for (const entry of ['package.json', 'package-lock.json', 'scripts', 'bin'])
      cpSync(join(REPOSITORY, entry), join(install, entry), { recursive: true });
    // better-sqlite3's install script (prebuild-install) first looks for a prebuilt binary: on a machine
    // with GitHub it downloads one, here (the npm registry only) it would compile for a minute or two.
    // The checkout's own node_modules holds the binary built for this very Node (same version and ABI),
    // so it is offered the way a download would be: a prebuild tarball in a local-prebuilds folder.
    const prebuilds = localPrebuilds();
    const started = Date.now();
    // better-sqlite3 compiles against the headers of the Node that will run it: this one's, when they sit
    // beside it (an unpacked Node release), unless npm_config_nodedir says otherwise. Without that,
    // node-gyp took the system's Node 20 headers and the service refused to start (ABI mismatch).
    const nodeDirectory = dirname(dirname(process.execPath));
    const headers = existsSync(join(nodeDirectory, 'include/node/node.h')) ? { npm_config_nodedir: nodeDirectory } : {};
    const npm = spawnSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts=false'], {
      cwd: install,
      encoding: 'utf8',
      env: { ...headers, ...process.env, NODE_ENV: 'production', npm_config_better_sqlite3_local_prebuilds: prebuilds },
    });
    const installSeconds = (Date.now() - started) / 1000;
    assert.equal(npm.status, 0, `${npm.stdout}\n${npm.stderr}`);
    const size = execFileSync('du', ['-sh', 'node_modules'], { cwd: install, encoding: 'utf8' }).split('\t')[0];
    console.log(`\n*** production install: npm ci --omit=dev took ${installSeconds.toFixed(0)} s; node_modules is ${size} ***\n`);
    for (const name of DEVELOPMENT_ONLY) assert.ok(!existsSync(join(install, 'node_modules', name)), `${name} is not installed`);
    assert.ok(
      existsSync(join(install, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')),
      'the native SQLite module was built',
    );

    // The image's last stage: add dist/; nothing else from the checkout.
    ensureBuilt();
    cpSync(join(REPOSITORY, 'dist'), join(install, 'dist'), { recursive: true });
    assert.ok(!existsSync(join(install, 'src')) && !existsSync(join(install, 'tsconfig.json')));

    const user = nobody();
    if (user === undefined) console.warn('\n*** not root: the production start runs as the current user, not as nobody ***\n');
    const dataDir = join(install, 'data');
    mkdirSync(dataDir);
    if (user !== undefined) chownSync(dataDir, user.uid, user.gid);
    const port = await freePort();
    const env = {
      PATH: process.env['PATH'],
      HOME: dataDir,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };

    // `npm start` in the production install: no src/, no build tools, so it must not try to build.
    const service = spawn('npm', ['start'], {
      cwd: install,
      env: { ...env, npm_config_cache: join(dataDir, '.npm') },
      ...user,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    service.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    service.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      service.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const origin = `http://127.0.0.1:${port}`;
      let lastReadiness = 'no answer yet';
      await until(
        async () => {
          if (service.exitCode !== null) throw new Error(`the service exited: ${output}`);
          try {
            const readiness = await fetch(`${origin}/readyz`);
            lastReadiness = `${readiness.status} ${await readiness.text()}`;
            return readiness.status === 200 ? true : undefined;
          } catch (error) {
            lastReadiness = String(error);
            return undefined;
          }
        },
        '/readyz 200 from the production install',
        300_000,
        200,
      ).catch((error: Error) => {
        // Say why: the last /readyz answer and what the service printed.
        throw new Error(`${error.message} (last /readyz: ${lastReadiness}); output:\n${output}`);
      });
      const key = (await until(async () => /\b(sk-sy-[A-Za-z0-9]+)/.exec(output)?.[1], 'the first key', 30_000)) as string;
      const models = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(models.status, 200);
      const echo = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'production' }] }),
      });
      assert.equal(echo.status, 200, await echo.clone().text());
      assert.doesNotMatch(output, /tsc|build/i, 'npm start did not build');
      if (user !== undefined) assert.equal(statSync(join(dataDir, 'switchyard.db')).uid, user.uid, 'the database belongs to nobody');
    } finally {
      // As systemd stops a unit: SIGTERM to every process of the group (npm, the wrapper, the service).
      signalGroupIfAlive(service.pid!, 'SIGTERM');
    }
    // The service drained and left 0, so the wrapper did; npm itself re-raises the SIGTERM it got once its
    // script has ended (its own behaviour: the Dockerfile and the unit run node directly).
    const { code, signal } = await exited;
    assert.ok(code === 0 || signal === 'SIGTERM', `npm start ended with ${code ?? signal}:\n${output}`);
    assert.doesNotMatch(output, /shutdown failed|grace period over/);
    // npm may leave before its script has finished draining; the wrapper and the service then follow.
    await until(
      async () => (spawnSync('pgrep', ['-g', String(service.pid)]).status === 1 ? true : undefined),
      'no process of the group left',
      30_000,
      100,
    );
  });
});

describe('deploy files', () => {
  const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
  if (!hasSystemdAnalyze)
    console.warn('\n*** SKIPPED: systemd-analyze verify of deploy/switchyard.service (systemd-analyze is not installed) ***\n');

  test(
    'deploy/switchyard.service passes systemd-analyze verify without a warning',
    { skip: !hasSystemdAnalyze && 'systemd-analyze is not installed' },
    () => {
      const result = spawnSync('systemd-analyze', ['verify', join(REPOSITORY, 'deploy/switchyard.service')], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stderr.trim(), '', 'no warning');
      const unit = readFileSync(join(REPOSITORY, 'deploy/switchyard.service'), 'utf8');
      assert.match(unit, /^ExecStart=\/usr\/bin\/node .*dist\/src\/main\.js serve$/m, 'node runs the service itself');
      assert.match(unit, /^User=switchyard$/m);
      assert.match(unit, /^KillMode=mixed$/m);
      assert.match(unit, /^EnvironmentFile=/m);
      // The stop timeout covers the drain delay and the in-flight grace (10 s by default).
      const timeout = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
      const drain = Number(/^Environment=DRAIN_DELAY_SECONDS=(\d+)$/m.exec(unit)?.[1]);
      assert.ok(timeout >= drain + 10 + 5, `TimeoutStopSec ${timeout} covers a ${drain} s drain and 10 s of grace`);
    },
  );

  test('the Dockerfile: a build stage, npm ci --omit=dev, a non-root user, a health check, node as PID 1', () => {
    const dockerfile = readFileSync(join(REPOSITORY, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /^FROM \S+ AS build$/m);
    assert.match(dockerfile, /^RUN npm run build$/m);
    assert.match(dockerfile, /^RUN npm ci --omit=dev/m);
    assert.match(dockerfile, /^COPY --from=build \/app\/dist \.\/dist$/m);
    assert.match(dockerfile, /^USER node$/m);
    assert.match(dockerfile, /^HEALTHCHECK .*\n?.*\/healthz/m);
    assert.match(dockerfile, /^CMD \["node", .*"dist\/src\/main\.js", "serve"\]$/m, 'exec form: node itself receives SIGTERM');
    const ignored = readFileSync(join(REPOSITORY, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.git']) assert.ok(ignored.includes(entry), `.dockerignore lists ${entry}`);
  });

  test('compose.yaml: Postgres, Redis, an S3-compatible store and two instances', () => {
    const compose = parseYaml(readFileSync(join(REPOSITORY, 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<string, { image?: string; build?: string; environment?: Record<string, string>; stop_grace_period?: string }>;
    };
    const services = compose.services;
    assert.match(services['postgres']?.image ?? '', /^postgres:/);
    assert.match(services['redis']?.image ?? '', /^redis:/);
    assert.match(services['minio']?.image ?? '', /^minio\/minio/);
    const instances = Object.entries(services).filter(([, service]) => service.build === '.');
    assert.equal(instances.length, 2);
    for (const [, instance] of instances) {
      assert.match(instance.environment?.['DATABASE_URL'] ?? '', /^postgres:\/\/.*@postgres:5432\//);
      assert.equal(instance.environment?.['REDIS_URL'], 'redis://redis:6379');
      assert.match(instance.environment?.['FILES_STORE'] ?? '', /^s3:\/\//);
      assert.equal(instance.environment?.['AWS_ENDPOINT_URL'], 'http://minio:9000');
      assert.equal(instance.stop_grace_period, '30s');
    }
    assert.notEqual(instances[0]![1].environment?.['INSTANCE_ID'], instances[1]![1].environment?.['INSTANCE_ID']);
  });
});
