/**
 * Switchyard instances as an operator runs them (`src/main.ts serve`, one process each, its own
 * DATA_DIR, PORT and INSTANCE_ID, sharing DATABASE_URL, REDIS_URL and the file store), watched: every
 * exit the harness did not cause is recorded with the process's last output. `kill()` SIGKILLs one
 * (a fault), `restart()` starts it again on its port with its data directory (what a supervisor does).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { startServerProcess, type ServerProcess } from '../server-process.ts';

export interface UnexpectedExit {
  instance: number;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What the process wrote about its end (from its last error line). */
  tail: string;
}

/**
 * The part of a dead process's output that says why: Node's "Unhandled 'error' event" or uncaught
 * exception report (the error, its stack, what emitted it), else the last 20 lines.
 */
function crashReport(output: string): string {
  const lines = output.split('\n');
  const thrown = lines.findLastIndex((line) => /Unhandled 'error' event|^\s*throw |Uncaught/.test(line));
  const from = thrown < 0 ? Math.max(0, lines.length - 20) : thrown;
  return lines
    .slice(from, from + 24)
    .filter((line) => !/^\s+(at node:|at .*node:internal)/.test(line))
    .join('\n');
}

export class Fleet {
  /** Exits the harness did not ask for, in order. */
  readonly exits: UnexpectedExit[] = [];
  private readonly processes: Array<ServerProcess | undefined> = [];
  private readonly expected = new Set<ServerProcess>();
  /** Everything every process of each instance wrote, restarts included. */
  private readonly previousOutput: string[] = [];

  private constructor(
    private readonly ports: number[],
    private readonly envs: NodeJS.ProcessEnv[],
    private readonly dataDirs: string[],
  ) {}

  /** Starts `count` instances at once (on an empty database: the migrations' race is part of the test). */
  static async start(count: number, sharedEnv: NodeJS.ProcessEnv): Promise<Fleet> {
    const ports: number[] = [];
    const envs: NodeJS.ProcessEnv[] = [];
    const dataDirs: string[] = [];
    for (let index = 0; index < count; index++) {
      ports.push(await freePort());
      const dataDir = mkdtempSync(join(tmpdir(), `switchyard-chaos-instance-${index}-`));
      dataDirs.push(dataDir);
      envs.push({ ...sharedEnv, DATA_DIR: dataDir, INSTANCE_ID: `chaos-${index}` });
    }
    const fleet = new Fleet(ports, envs, dataDirs);
    await Promise.all(envs.map((_, index) => fleet.restart(index)));
    return fleet;
  }

  get size(): number {
    return this.ports.length;
  }

  origin(index: number): string {
    return `http://127.0.0.1:${this.ports[index]}`;
  }

  /** Whether instance `index` has a live process. */
  alive(index: number): boolean {
    const current = this.processes[index];
    return current !== undefined && current.child.exitCode === null && current.child.signalCode === null;
  }

  /** Instance `index`'s output: every process it ran so far. */
  output(index: number): string {
    return (this.previousOutput[index] ?? '') + (this.processes[index]?.output() ?? '');
  }

  /** Starts instance `index` on its port with its data directory, unless it is alive; resolves once /healthz answers. */
  async restart(index: number): Promise<void> {
    if (this.alive(index)) return;
    const previous = this.processes[index];
    if (previous !== undefined) this.previousOutput[index] = (this.previousOutput[index] ?? '') + previous.output();
    this.processes[index] = undefined;
    const started = await startServerProcess(this.envs[index]!, this.ports[index]);
    this.processes[index] = started;
    started.child.once('exit', (code, signal) => {
      if (this.expected.has(started)) return;
      this.exits.push({ instance: index, at: Date.now(), code, signal, tail: crashReport(started.output()) });
    });
  }

  /** SIGKILLs instance `index` (a fault, so not an unexpected exit); resolves once it is gone. */
  async kill(index: number): Promise<void> {
    const current = this.processes[index];
    if (current === undefined || !this.alive(index)) return;
    this.expected.add(current);
    const exited = new Promise<void>((resolve) => current.child.once('exit', () => resolve()));
    current.child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM to every instance (SIGKILL after 15 s), then removes the data directories. */
  async close(): Promise<void> {
    await Promise.all(
      this.processes.map(async (current) => {
        if (current === undefined) return;
        this.expected.add(current);
        const timer = setTimeout(() => current.child.kill('SIGKILL'), 15_000);
        await current.stop();
        clearTimeout(timer);
      }),
    );
    for (const dataDir of this.dataDirs) rmSync(dataDir, { recursive: true, force: true });
  }

  /** For a process `exit` handler: SIGKILL every instance now. */
  closeSync(): void {
    for (const current of this.processes) {
      if (current === undefined) continue;
      this.expected.add(current);
      current.child.kill('SIGKILL');
    }
  }
}
