/**
 * A private `redis-server` for chaos tests (free port, 127.0.0.1, no persistence: `--save "" --appendonly
 * no`), never the shared one on 6379. Faults: `kill()` (SIGKILL; the counters are gone, as in a restart
 * of a Redis without persistence), `start()` again on the same port, `freeze()` / `thaw()` (SIGSTOP /
 * SIGCONT).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../free-port.ts';
import { until } from '../until.ts';
import { hasBinary } from './process-tree.ts';

export const canRunPrivateRedis = hasBinary('redis-server');

/** Resolves true when a RESP PING on 127.0.0.1:`port` answers +PONG within 500 ms. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data: Buffer) => done(data.toString().startsWith('+PONG')));
  });
}

export class PrivateRedis {
  private child: ChildProcess | undefined;
  private stopped = false;

  private constructor(readonly port: number) {}

  static async create(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts redis-server on this port; resolves once it answers PING. */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      { stdio: 'ignore' },
    );
    this.child = child;
    this.stopped = false;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await Promise.race([
      until(async () => ((await ping(this.port)) ? true : undefined), `redis-server on port ${this.port}`, 10_000),
      exited.then(() => {
        throw new Error(`redis-server on port ${this.port} exited at start`);
      }),
    ]);
  }

  /** SIGKILL (after a SIGCONT, in case it was frozen); resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }

  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.kill();
  }

  /** For a process `exit` handler: SIGKILL now, synchronously. */
  closeSync(): void {
    if (this.stopped) return;
    this.child?.kill('SIGCONT');
    this.child?.kill('SIGKILL');
  }
}
