/**
 * Runs `switchyard serve` as a separate process, as an operator would (several instances, signals).
 * The port is random in 20000-31999 unless given; the server is ready when /healthz answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { TYPESCRIPT_LOADER } from './typescript-loader.ts';

export interface ServerProcess {
  child: ChildProcess;
  origin: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends SIGTERM (graceful shutdown) and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * @param port Where to listen. Default: a random port below Linux's ephemeral range (32768-60999), where
 * the suite's own outgoing connections hold ports (for a minute after closing, in TIME_WAIT); if another
 * listener has it, the server exits with EADDRINUSE and another random port is tried (a CI run once
 * lost a test to that).
 */
export async function startServerProcess(env: NodeJS.ProcessEnv, port?: number): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(env, port ?? 20_000 + Math.floor(Math.random() * 12_000));
    } catch (error) {
      if (port !== undefined || attempt === 5 || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

async function startOnPort(env: NodeJS.ProcessEnv, port: number): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, 'src/main.ts', 'serve'], {
    env: { PATH: process.env['PATH'], LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(async () => {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) {
          clearInterval(poll);
          resolve();
        }
      } catch {
        // not listening yet
      }
    }, 100);
    void exited.then((code) => {
      clearInterval(poll);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
  return {
    child,
    origin: `http://127.0.0.1:${port}`,
    output: () => output,
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
