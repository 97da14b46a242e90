/** Runs the `switchyard` CLI (TypeScript entry through scripts/typescript-hooks.mjs) as a separate process, as an operator would. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TYPESCRIPT_LOADER } from './typescript-loader.ts';

const run = promisify(execFile);

export async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const result = await run(process.execPath, [...TYPESCRIPT_LOADER, 'src/main.ts', ...args], {
      env: { PATH: process.env['PATH'], ...env },
    });
    return { stdout: result.stdout, stderr: result.stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}
