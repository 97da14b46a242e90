#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's own test runner (TypeScript loaded by scripts/typescript-hooks.mjs), each
// file in its own process, two at a time. Arguments name files or folders (`npm test -- test/formats`
// runs every test below it). Flags:
//   --test-concurrency=N          files run at once (default 2, this project's machine has 2 cores);
//   --test-name-pattern=P, --test-skip-pattern=P, --test-timeout=MS, --test-only: as Node's own;
//   --timings=FILE                also write per-file timings (JSON, slowest first): the wall time of
//                                 each file's process, its CPU seconds and those of the processes it
//                                 started (user + system: the figures a busy machine inflates least)
//                                 and the wall time of its top-level tests;
// any other flag is passed to each test file's node process. A run that finds no test file fails.
//
// Files run longest first, by the committed list scripts/test-durations.json (refresh it with the whole
// suite, `npm test -- --timings=scripts/test-durations.json`, on a quiet machine), so that the run does
// not end with one long file running alone; a file the list does not know counts as its median file.
// Node's `--test` sorts the files it is given by name, so the runner is driven through `run()`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import timingsReporter from './test-timings.mjs';

const DURATIONS = fileURLToPath(new URL('test-durations.json', import.meta.url));
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

/**
 * Longest first by the committed list; a file the list does not know (new since the list was written)
 * counts as the median known file, so neither a new long file ends the run alone nor new short ones
 * hold the long poles back. Ties in name order.
 */
function schedule(files) {
  const seconds = new Map();
  if (existsSync(DURATIONS)) {
    for (const row of JSON.parse(readFileSync(DURATIONS, 'utf8'))) seconds.set(row.file, row.processWallSeconds ?? row.testWallSeconds);
  }
  const known = [...seconds.values()].sort((a, b) => a - b);
  const median = known.length === 0 ? 0 : known[Math.floor(known.length / 2)];
  const estimate = (file) => seconds.get(relative(process.cwd(), file)) ?? median;
  return [...files].sort((a, b) => estimate(b) - estimate(a) || a.localeCompare(b));
}

const argumentsGiven = process.argv.slice(2);
const requested = argumentsGiven.filter((argument) => !argument.startsWith('--'));
const flags = argumentsGiven.filter((argument) => argument.startsWith('--'));
const flagValues = (name) => flags.filter((flag) => flag.startsWith(`${name}=`)).map((flag) => flag.slice(name.length + 1));
const RUNNER_FLAGS = ['--test-concurrency', '--test-name-pattern', '--test-skip-pattern', '--test-timeout', '--timings'];
const passedOn = flags.filter((flag) => flag !== '--test-only' && !RUNNER_FLAGS.some((name) => flag.startsWith(`${name}=`)));

const files = schedule(
  (requested.length > 0 ? requested : ['src', 'test']).flatMap((path) => (statSync(path).isDirectory() ? collect(path) : [path])),
).map((file) => resolve(file));
if (files.length === 0) {
  console.error(`No test files found in: ${requested.join(' ') || 'src test'}`);
  process.exit(1);
}

const timingsFile = flagValues('--timings').at(-1);
const usageDirectory = timingsFile === undefined ? undefined : mkdtempSync(join(tmpdir(), 'switchyard-test-usage-'));
process.env['NODE_ENV'] = 'test';
if (usageDirectory !== undefined) process.env['SWITCHYARD_TEST_USAGE_DIR'] = usageDirectory;

const concurrency = Number(flagValues('--test-concurrency').at(-1) ?? 2);
const timeout = flagValues('--test-timeout').at(-1);
const stream = run({
  files,
  concurrency,
  execArgv: ['--import', TYPESCRIPT_HOOKS, ...(usageDirectory === undefined ? [] : ['--import', USAGE_PROBE]), ...passedOn],
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
