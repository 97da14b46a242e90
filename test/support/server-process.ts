/**
 * Runs `switchyard serve` as a separate process, as an operator would (several instances, signals).
 * The port is random in 20000-39999; the server is ready when /healthz answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServerProcess {
  child: ChildProcess;
  origin: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends SIGTERM (graceful shutdown) and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** @param port Where to listen; default a random port in 20000-39999. */
export async function startServerProcess(
  env: NodeJS.ProcessEnv,
  port = 20_000 + Math.floor(Math.random() * 20_000),
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
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
