#!/usr/bin/env node
// `npm start`: builds only when a source is newer than the last build, then runs the compiled service
// as `switchyard serve` (so a restart with nothing changed starts in well under 2 s).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_MALLOC_ENVIRONMENT, serviceNodeFlags } from './service-memory.mjs';

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
// Memory settings (scripts/service-memory.mjs): for the CPUs this process may use, and PARALLEL_SCAVENGE;
// a flag named in NODE_OPTIONS is not added, and malloc variables the operator set win.
let serviceFlags;
try {
  serviceFlags = serviceNodeFlags();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const NODE_FLAGS = serviceFlags.filter((flag) => !(process.env.NODE_OPTIONS ?? '').includes(flag.split('=')[0]));
const service = spawn(process.execPath, [...NODE_FLAGS, BUILD_OUTPUT, 'serve', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...SERVICE_MALLOC_ENVIRONMENT, ...process.env },
});
// The service drains on SIGTERM/SIGINT: pass them on and leave with its exit code.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => service.kill(signal));
service.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
