// `npm start` (scripts/start.mjs) under each way a supervisor stops it: SIGTERM to the whole process
// group (systemd's default KillMode=control-group), SIGTERM to the wrapper alone (a container's PID 1),
// SIGINT to the group (Ctrl-C), the wrapper killed outright, and SIGTERM to a real `npm start` process
// alone (a supervisor holding npm's pid: npm exits, the wrapper notices its parent leaving). A balancer-like client keeps streamed
// requests in flight and sends new ones while /readyz says 200 (as haproxy does): every request must
// succeed, the documented drain must run in full (/readyz 503 while still serving), the wrapper leaves
// with 0, and no server process is left behind.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MockOpenAIServer, type MockOpenAIReply } from '../support/mock-upstreams/index.ts';
import type { MockBehaviour, RecordedRequest } from '../support/mock-upstreams/mock-upstream-server.ts';
import { freePort } from '../support/free-port.ts';
import { runCli } from '../support/run-cli.ts';
import { until } from '../support/until.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const DRAIN_DELAY_SECONDS = 2;

/** Every chat answer streams five words 80 ms apart: requests are in flight when the signal lands. */
class SlowUpstream extends MockOpenAIServer {
  protected override defaultBehaviour(request: RecordedRequest): MockBehaviour<MockOpenAIReply> {
    const behaviour = super.defaultBehaviour(request);
    return behaviour.type === 'reply' ? { ...behaviour, reply: { text: 'one two three four five' }, delayMs: 80 } : behaviour;
  }
}

interface ClientTally {
  succeeded: number;
  failed: string[];
  /** Requests that completed after the signal was sent. */
  completedAfterSignal: number;
  sawNotReady: boolean;
}

/**
 * A balancer and its clients: a health check every 100 ms, and four callers sending streamed requests
 * back to back while the instance is in rotation. Runs until `stopped()` is true.
 */
async function balancedTraffic(
  origin: string,
  key: string,
  signalledAt: () => number | undefined,
  stopped: () => boolean,
): Promise<ClientTally> {
  const tally: ClientTally = { succeeded: 0, failed: [], completedAfterSignal: 0, sawNotReady: false };
  let inRotation = true;
  const healthCheck = (async () => {
    while (!stopped()) {
      try {
        const ready = await fetch(`${origin}/readyz`);
        await ready.arrayBuffer();
        inRotation = ready.status === 200;
        if (!inRotation) tally.sawNotReady = true;
      } catch {
        inRotation = false;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const caller = async (): Promise<void> => {
    while (!stopped()) {
      if (!inRotation) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      try {
        const response = await fetch(`${origin}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'slow-model', stream: true, messages: [{ role: 'user', content: 'count' }] }),
        });
        const text = await response.text();
        if (response.status !== 200 || !text.endsWith('data: [DONE]\n\n')) tally.failed.push(`${response.status}: ${text.slice(-200)}`);
        else tally.succeeded += 1;
      } catch (error) {
        tally.failed.push(String(error));
      }
      if (signalledAt() !== undefined) tally.completedAfterSignal += 1;
    }
  };
  await Promise.all([healthCheck, caller(), caller(), caller(), caller()]);
  return tally;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The wrapper's child processes (the service). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0);
  } catch {
    return [];
  }
}

/** Every process below `pid`, with its command line. */
function descendantsOf(pid: number): Array<{ pid: number; args: string }> {
  let listing: string;
  try {
    listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const children = listing
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ pid: Number(match[1]), args: match[2]! }));
  return children.flatMap((child) => [child, ...descendantsOf(child.pid)]);
}

describe('npm start stops with the full drain under any supervisor', () => {
  const upstream = new SlowUpstream();
  let project: string;
  let env: NodeJS.ProcessEnv;
  let key: string;

  before(async () => {
    await upstream.start();
    // A production-shaped project: the wrapper, and a "compiled" entry that runs this checkout's
    // service (through tsx, so the test needs no build); no src/, so the wrapper never builds.
    project = mkdtempSync(join(tmpdir(), 'switchyard-start-signals-'));
    mkdirSync(join(project, 'scripts'));
    mkdirSync(join(project, 'dist/src'), { recursive: true });
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'switchyard', private: true, scripts: { start: 'node scripts/start.mjs' } }),
    );
    for (const file of ['start.mjs', 'service-memory.mjs'])
      writeFileSync(join(project, 'scripts', file), readFileSync(join(REPOSITORY, 'scripts', file)));
    writeFileSync(
      join(project, 'dist/src/main.js'),
      `import { main } from ${JSON.stringify(pathToFileURL(join(REPOSITORY, 'src/main.ts')).href)};\n` +
        `main(process.argv.slice(2)).catch((error) => { console.error(error); process.exit(1); });\n`,
    );
    const configFile = join(project, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        bootstrapKey: false,
        providers: { slow: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'slow-model', provider: 'slow', capabilities: ['chat', 'streaming'] }],
      }),
    );
    env = {
      DATA_DIR: join(project, 'data'),
      SWITCHYARD_CONFIG: configFile,
      DRAIN_DELAY_SECONDS: String(DRAIN_DELAY_SECONDS),
      LOG_LEVEL: 'warn',
    };
    const created = await runCli(['keys', 'create', '--org', 'org-signals', '--create-org', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    key = (JSON.parse(created.stdout) as { key: string }).key;
  });
  after(async () => {
    await upstream.close();
    rmSync(project, { recursive: true, force: true });
  });

  /**
   * Starts the wrapper (or `npm start`) as its own process group (as a supervisor would); resolves once
   * /healthz answers.
   */
  async function startWrapper(
    command: readonly string[] = [process.execPath, 'scripts/start.mjs'],
  ): Promise<{ wrapper: ChildProcess; origin: string; output: () => string; exited: Promise<number | null> }> {
    const port = await freePort();
    const wrapper = spawn(command[0]!, command.slice(1), {
      cwd: project,
      detached: true,
      env: {
        PATH: process.env['PATH'],
        HOME: project,
        NODE_OPTIONS: `--import ${pathToFileURL(join(REPOSITORY, 'node_modules/tsx/dist/loader.mjs')).href}`,
        ...env,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    wrapper.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    wrapper.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => wrapper.once('exit', (code) => resolve(code)));
    const origin = `http://127.0.0.1:${port}`;
    for (let attempt = 0; ; attempt++) {
      if (wrapper.exitCode !== null) throw new Error(`npm start exited: ${output}`);
      try {
        if ((await fetch(`${origin}/healthz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (attempt > 600) throw new Error(`npm start did not answer: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { wrapper, origin, output: () => output, exited };
  }

  const cases: Array<{ name: string; send: (wrapper: ChildProcess) => void }> = [
    { name: 'SIGTERM to the whole group (systemd KillMode=control-group)', send: (wrapper) => process.kill(-wrapper.pid!, 'SIGTERM') },
    { name: "SIGTERM to the wrapper alone (a container's PID 1)", send: (wrapper) => wrapper.kill('SIGTERM') },
    { name: 'SIGINT to the whole group (Ctrl-C)', send: (wrapper) => process.kill(-wrapper.pid!, 'SIGINT') },
    { name: 'the wrapper killed outright (SIGKILL): the service still drains and stops', send: (wrapper) => wrapper.kill('SIGKILL') },
  ];
  for (const { name, send } of cases) {
    test(name, async () => {
      const { wrapper, origin, output, exited } = await startWrapper();
      const [service] = childrenOf(wrapper.pid!);
      assert.ok(service !== undefined, 'the wrapper runs the service as its child');
      const serviceExited = new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (!pidAlive(service)) {
            clearInterval(poll);
            resolve();
          }
        }, 50);
      });
      const stopSignal: { sentAt?: number } = {};
      let serviceGone = false;
      void serviceExited.then(() => (serviceGone = true));
      const traffic = balancedTraffic(
        origin,
        key,
        () => stopSignal.sentAt,
        () => serviceGone,
      );
      // Traffic is flowing before the stop.
      await new Promise((resolve) => setTimeout(resolve, 700));
      const signalledAt = Date.now();
      stopSignal.sentAt = signalledAt;
      send(wrapper);
      await serviceExited;
      const stoppedAfterMs = Date.now() - signalledAt;
      const tally = await traffic;
      const code = await exited;

      assert.deepEqual(tally.failed, [], `no request failed; output:\n${output()}`);
      assert.ok(tally.succeeded >= 4, `requests were served (${tally.succeeded})`);
      assert.ok(tally.completedAfterSignal > 0, 'requests were in flight during the drain');
      assert.ok(tally.sawNotReady, '/readyz answered 503 during the drain');
      assert.ok(stoppedAfterMs >= DRAIN_DELAY_SECONDS * 1000 - 100, `the drain ran in full (${stoppedAfterMs} ms)`);
      if (name.includes('SIGKILL')) assert.equal(code, null);
      else assert.equal(code, 0, output());
      assert.deepEqual(childrenOf(wrapper.pid!), [], 'nothing left behind');
    });
  }

  test('SIGTERM to the `npm start` process alone (a supervisor holding npm’s pid): the service drains and nothing is left', async () => {
    // npm from PATH, as a supervisor finds it (its `node` is the one first on PATH too).
    const { wrapper: npmProcess, origin, output } = await startWrapper(['npm', 'start']);
    const below = descendantsOf(npmProcess.pid!);
    const service = below.find((child) => child.args.includes('dist/src/main.js'))?.pid;
    const startScript = below.find((child) => child.args.includes('scripts/start.mjs'))?.pid;
    assert.ok(service !== undefined && startScript !== undefined, `npm runs the wrapper and the service: ${JSON.stringify(below)}`);
    let serviceGone = false;
    const stopSignal: { sentAt?: number } = {};
    const traffic = balancedTraffic(
      origin,
      key,
      () => stopSignal.sentAt,
      () => serviceGone,
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    const signalledAt = Date.now();
    stopSignal.sentAt = signalledAt;
    npmProcess.kill('SIGTERM');
    try {
      await until(
        async () => (pidAlive(service) ? undefined : true),
        `the service (pid ${service}) to stop after npm was signalled`,
        60_000,
      );
    } finally {
      // A failed run must not leave the orphans behind.
      serviceGone = true;
      for (const pid of [startScript, service]) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    }
    const stoppedAfterMs = Date.now() - signalledAt;
    const tally = await traffic;
    await until(async () => (pidAlive(startScript) ? undefined : true), 'the wrapper to leave', 30_000);

    assert.deepEqual(tally.failed, [], `no request failed; output:\n${output()}`);
    assert.ok(tally.sawNotReady, '/readyz answered 503 during the drain');
    assert.ok(stoppedAfterMs >= DRAIN_DELAY_SECONDS * 1000 - 100, `the drain ran in full (${stoppedAfterMs} ms)`);
    assert.match(output(), /has left: stopping the service/);
  });
});
