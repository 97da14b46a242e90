#!/usr/bin/env node
// `npm start`: builds only when a source is newer than the last build, then runs the compiled service
// as `switchyard serve` (so a restart with nothing changed starts in well under 2 s).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const BUILD_OUTPUT = 'dist/src/main.js';
/** Written by scripts/build.mjs when a build has finished. */
const BUILD_STAMP = 'dist/.build-complete';
const SOURCES = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

function newestModification(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestModification(join(path, entry)));
  return newest;
}

const built = existsSync(BUILD_OUTPUT) && existsSync(BUILD_STAMP) ? statSync(BUILD_STAMP).mtimeMs : 0;
const sources = Math.max(...SOURCES.filter((path) => existsSync(path)).map(newestModification));
if (sources > built) {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// Memory, measured with bench/server-flags.ts (50 connections of streamed and JSON generation, paired
// runs against V8's defaults): peak resident size 178-183 MB instead of 266-269 MB for 1-5% more CPU.
// - a young generation of 8 MB semi-spaces (16 MB by default on this size of machine);
// - the old generation may grow to 2x what the last full collection kept (V8 allows up to 4x);
// - glibc returns freed memory above 128 KiB to the system instead of keeping it for reuse (module
//   parsing at start leaves ~30 MB of freed but resident malloc memory otherwise). Ignored elsewhere.
// Tighter settings cost more than they save: 1.5x growth gave 168 MB for ~9% more CPU (README, Memory).
// Each stays as the operator sets it: a flag named in NODE_OPTIONS is not added, and set variables win.
const NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100'].filter(
  (flag) => !(process.env.NODE_OPTIONS ?? '').includes(flag.split('=')[0]),
);
const MALLOC_ENVIRONMENT = { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };
const service = spawn(process.execPath, [...NODE_FLAGS, BUILD_OUTPUT, 'serve', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...MALLOC_ENVIRONMENT, ...process.env },
});
// The service drains on SIGTERM/SIGINT: pass them on and leave with its exit code.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => service.kill(signal));
service.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
