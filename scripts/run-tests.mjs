#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's own test runner (TypeScript loaded by tsx).
// Node 20's `--test` takes no globs, so the files are collected here. Arguments name files or folders
// (`npm test -- test/formats` runs every test below it); flags are passed on. A run that finds no test
// file fails rather than reporting success.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

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

const requested = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
const flags = process.argv.slice(2).filter((argument) => argument.startsWith('--'));
const files = (requested.length > 0 ? requested : ['src', 'test'])
  .flatMap((path) => (statSync(path).isDirectory() ? collect(path) : [path]))
  .sort();
if (files.length === 0) {
  console.error(`No test files found in: ${requested.join(' ') || 'src test'}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...flags, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
