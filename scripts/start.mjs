#!/usr/bin/env node
// `npm start`: builds only when a source is newer than the last build, then runs the compiled service
// as `switchyard serve` (so a restart with nothing changed starts in well under 2 s). A production
// install (no src/, or no dev dependencies) never builds: it runs the prebuilt dist/.
// Signals: this wrapper is a second process, and a supervisor may signal it alone (a container's PID 1),
// the whole group (systemd's default, Ctrl-C), or only the service. It relays a signal over an IPC
// channel as "stop" (the service treats it and its own signal as one stop, so the drain is kept), and the
// service stops too if this wrapper dies (the channel closes): nothing is left orphaned. A supervisor that
// runs `npm start` holds npm's pid, and npm leaves on SIGTERM without passing it on: this wrapper watches
// its parent and, once it has left (re-parented), stops the service as on SIGTERM (with the drain).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
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

/**
 * The build needs the source, the compiler and the dashboard bundler (dev dependencies). esbuild is the
 * telling one: node-llama-cpp's peer dependency brings TypeScript into a production install too.
 */
const BUILD_TOOLS = ['node_modules/typescript/bin/tsc', 'node_modules/esbuild'];
const built = existsSync(BUILD_OUTPUT) && existsSync(BUILD_STAMP) ? statSync(BUILD_STAMP).mtimeMs : 0;
const sources = existsSync('src') ? Math.max(...SOURCES.filter((path) => existsSync(path)).map(newestModification)) : 0;
if (sources > built) {
  if (!BUILD_TOOLS.every((tool) => existsSync(tool))) {
    if (!existsSync(BUILD_OUTPUT)) {
      console.error('dist/ is missing and the build tools are not installed: run `npm ci && npm run build`, or install a prebuilt dist/.');
      process.exit(1);
    }
    console.error(
      'switchyard: src/ is newer than dist/, but the build tools are not installed (production install): running the existing dist/.',
    );
  } else {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
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
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  env: { ...SERVICE_MALLOC_ENVIRONMENT, ...process.env, SWITCHYARD_WRAPPER: 'start.mjs' },
});
// Until the service says its own handlers are in place, a signal is passed on as the signal itself
// (a service still starting just ends); afterwards as a "stop" message, which never skips the drain.
let serviceListening = false;
service.on('message', (message) => {
  if (message?.type === 'switchyard:stop-handlers-ready') serviceListening = true;
});
/** Stops the service as `signal` would: a "stop" message once it listens (the drain), else the signal. */
function stopService(signal) {
  if (serviceListening && service.connected) service.send({ type: 'switchyard:stop', signal });
  else service.kill(signal);
}
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => stopService(signal));
// The parent leaving (npm signalled alone) re-parents this process: stop once, as on SIGTERM. PID 1 (a
// container) has no parent to lose. Polled, as Node has no event for it; the timer keeps nothing alive.
const parentAtStart = process.ppid;
// Output to a parent that has gone may fail (EPIPE): that must not end the wrapper before the service.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
if (parentAtStart > 1) {
  const watch = setInterval(() => {
    if (process.ppid === parentAtStart) return;
    clearInterval(watch);
    console.error(
      `switchyard: the process that started this wrapper (pid ${parentAtStart}) has left: stopping the service (with the drain).`,
    );
    stopService('SIGTERM');
  }, 250);
  watch.unref();
}
service.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
