#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's own test runner (TypeScript loaded by scripts/typescript-hooks.mjs),
// two processes at a time: the files of each group in scripts/test-groups.mjs (pure unit folders) share one
// process, every other file has its own. Arguments name files or folders (`npm test -- test/formats`
// runs every test below it). Flags:
//   --test-concurrency=N          CPU-bound processes at once (default 2, this project's machine has 2 cores);
//   --waiting-slots=W             processes of files that mostly wait (WAITING in scripts/test-groups.mjs)
//                                 run beside them, at most W at once (default 2; 0: they take CPU slots);
//   --test-name-pattern=P, --test-skip-pattern=P, --test-timeout=MS, --test-only: as Node's own;
//   --timings=FILE                also write per-file timings (JSON, slowest first): the wall time of
//                                 each file's process, its CPU seconds and those of the processes it
//                                 started (user + system: the figures a busy machine inflates least)
//                                 and the wall time of its top-level tests;
// any other flag is passed to each test file's node process. A run that finds no test file fails.
//
// Files (and groups) start longest first, by the committed list scripts/test-durations.json, so that the
// run does not end with one long file running alone (scripts/test-schedule.mjs). Node's `--test` sorts the
// files it is given by name, so the runner is driven through `run()`.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { order, unitsOf } from './test-schedule.mjs';
import timingsReporter from './test-timings.mjs';

const CPU_SLOT = fileURLToPath(new URL('test-cpu-slot.mjs', import.meta.url));
const USAGE_PROBE = fileURLToPath(new URL('test-process-usage.mjs', import.meta.url));
const TYPESCRIPT_HOOKS = fileURLToPath(new URL('typescript-hooks.mjs', import.meta.url));

function collect(directory) {
  const found = [];
  for (const entry of readdirSync(directory)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) found.push(...collect(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const argumentsGiven = process.argv.slice(2);
const requested = argumentsGiven.filter((argument) => !argument.startsWith('--'));
const flags = argumentsGiven.filter((argument) => argument.startsWith('--'));
const flagValues = (name) => flags.filter((flag) => flag.startsWith(`${name}=`)).map((flag) => flag.slice(name.length + 1));
const RUNNER_FLAGS = ['--test-concurrency', '--waiting-slots', '--test-name-pattern', '--test-skip-pattern', '--test-timeout', '--timings'];
const passedOn = flags.filter((flag) => flag !== '--test-only' && !RUNNER_FLAGS.some((name) => flag.startsWith(`${name}=`)));

const found = (requested.length > 0 ? requested : ['src', 'test']).flatMap((path) =>
  statSync(path).isDirectory() ? collect(path) : [path],
);
if (found.length === 0) {
  console.error(`No test files found in: ${requested.join(' ') || 'src test'}`);
  process.exit(1);
}

const groupDirectory = mkdtempSync(join(tmpdir(), 'switchyard-test-groups-'));
process.on('exit', () => rmSync(groupDirectory, { recursive: true, force: true }));
const cpuSlots = Number(flagValues('--test-concurrency').at(-1) ?? 2);
const waitingSlots = Number(flagValues('--waiting-slots').at(-1) ?? 2);
const units = unitsOf(
  found.map((file) => resolve(file)),
  groupDirectory,
);
const files = order(units, { cpuSlots, waitingSlots });
// The CPU slots are only needed when more processes than CPU slots run at once.
const waitingUnits = Math.min(waitingSlots, units.filter((unit) => unit.waiting).length);
const concurrency = cpuSlots + waitingUnits;
if (waitingUnits > 0) {
  const slotDirectory = mkdtempSync(join(tmpdir(), 'switchyard-test-cpu-slots-'));
  process.on('exit', () => rmSync(slotDirectory, { recursive: true, force: true }));
  process.env['SWITCHYARD_TEST_CPU_SLOTS_DIR'] = slotDirectory;
  process.env['SWITCHYARD_TEST_CPU_SLOTS'] = String(cpuSlots);
}

const timingsFile = flagValues('--timings').at(-1);
const usageDirectory = timingsFile === undefined ? undefined : mkdtempSync(join(tmpdir(), 'switchyard-test-usage-'));
process.env['NODE_ENV'] = 'test';
if (usageDirectory !== undefined) process.env['SWITCHYARD_TEST_USAGE_DIR'] = usageDirectory;

const timeout = flagValues('--test-timeout').at(-1);
const stream = run({
  files,
  concurrency,
  execArgv: [
    ...(waitingUnits > 0 ? ['--import', CPU_SLOT] : []),
    '--import',
    TYPESCRIPT_HOOKS,
    ...(usageDirectory === undefined ? [] : ['--import', USAGE_PROBE]),
    ...passedOn,
  ],
  ...(flagValues('--test-name-pattern').length > 0 ? { testNamePatterns: flagValues('--test-name-pattern') } : {}),
  ...(flagValues('--test-skip-pattern').length > 0 ? { testSkipPatterns: flagValues('--test-skip-pattern') } : {}),
  ...(timeout === undefined ? {} : { timeout: Number(timeout) }),
  ...(flags.includes('--test-only') ? { only: true } : {}),
});
stream.on('test:fail', () => {
  process.exitCode = 1;
});

const forSpec = stream.pipe(new PassThrough({ objectMode: true }));
forSpec.compose(spec).pipe(process.stdout);
if (timingsFile !== undefined) {
  const forTimings = stream.pipe(new PassThrough({ objectMode: true }));
  let text = '';
  for await (const chunk of timingsReporter(forTimings)) text += chunk;
  await writeFile(timingsFile, text);
  rmSync(usageDirectory, { recursive: true, force: true });
  console.log(`Per-file timings: ${timingsFile}`);
}
