/**
 * Starts servers for benchmarks as child processes and waits until they print their address.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBudget, SERVICE_MALLOC_ENVIRONMENT, serviceNodeFlags } from '../../scripts/service-memory.mjs';

export interface RunningProcess {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Whether `taskset` can pin processes to a core here (Linux with util-linux). */
export const canPin = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/**
 * Runs this benchmark pinned to `core`: the first call re-runs the script under `taskset` with the same
 * flags and arguments and exits with its status; inside the pinned run (BENCH_PINNED=1) it returns.
 * Without taskset it returns at once and the benchmark runs unpinned.
 */
export function runPinnedTo(core: number): void {
  if (!canPin || process.env['BENCH_PINNED'] === '1') return;
  const pinned = spawnSync('taskset', ['-c', String(core), process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(pinned.status ?? 1);
}

/**
 * Spawns `node --import tsx <script> ...args` and resolves once stdout matches `ready`. With `cpu`, the
 * process is pinned to that core (taskset), so a server and its load generator do not share a core.
 */
export async function startProcess(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  cpu?: number,
): Promise<RunningProcess & { match: RegExpExecArray }> {
  // Compiled scripts run as `npm start` runs them (scripts/start.mjs: its memory flags and malloc settings).
  // BENCH_SERVER_FLAGS adds node flags to them, e.g. `--cpu-prof --cpu-prof-dir=prof` to profile the server.
  const serverFlags = (process.env['BENCH_SERVER_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
  const compiled = script.endsWith('.js');
  // The server's own CPU budget decides its flags: one core when it is pinned.
  const loader = compiled ? [...serviceNodeFlags(cpu !== undefined && canPin ? 1 : cpuBudget()), ...serverFlags] : ['--import', 'tsx'];
  const malloc = compiled ? SERVICE_MALLOC_ENVIRONMENT : {};
  const command = [process.execPath, ...loader, script, ...args];
  const pinned = cpu !== undefined && canPin ? ['taskset', '-c', String(cpu), ...command] : command;
  const child = spawn(pinned[0]!, pinned.slice(1), { env: { ...malloc, ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let started = false;
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      // Once ready, the output is only kept (a server tracing its GCs writes megabytes of it).
      if (started) return;
      const found = ready.exec(output);
      if (found === null) return;
      started = true;
      resolve(found);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)));
  });
  return {
    child,
    match,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface SwitchyardProcess extends RunningProcess {
  origin: string;
  key: string;
}

let built = false;

/**
 * Starts `switchyard serve` on a fresh data dir (first start prints the bootstrap key), from the
 * compiled build, as `npm start` runs it (built once per benchmark process). `checkout` runs another
 * checkout's build instead (already built there with `npm run build`), to price a change against its base.
 */
export async function startSwitchyard(
  env: NodeJS.ProcessEnv = {},
  port = 18_411,
  cpu?: number,
  checkout?: string,
): Promise<SwitchyardProcess> {
  if (!built && checkout === undefined) {
    const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error('the build failed');
    built = true;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const running = await startProcess(
    checkout === undefined ? 'dist/src/main.js' : join(checkout, 'dist/src/main.js'),
    ['serve'],
    { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    /(sk-sy-[A-Za-z0-9]{43})[\s\S]*listening|(sk-sy-[A-Za-z0-9]{43})\n[\s\S]*try: curl/,
    cpu,
  );
  return { ...running, origin: `http://127.0.0.1:${port}`, key: running.match[1] ?? running.match[2]! };
}

function statusMegabytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${field}:`));
    return line === undefined ? undefined : Math.round(Number(line.split(/\s+/)[1]) / 1024);
  } catch {
    return undefined;
  }
}

/** Resident set size of a process, MB (Linux /proc), or undefined. */
export function residentMegabytes(pid: number): number | undefined {
  return statusMegabytes(pid, 'VmRSS');
}

/** The highest resident set size a process has had, MB (Linux /proc), or undefined. */
export function peakResidentMegabytes(pid: number): number | undefined {
  return statusMegabytes(pid, 'VmHWM');
}
