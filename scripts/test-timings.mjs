// A test reporter that records, per test file, the wall time of its top-level tests and, when the files
// ran with scripts/test-process-usage.mjs preloaded, the CPU time and wall time of the file's own process.
// Use it beside the usual reporter:
//   npm test -- --test-reporter=./scripts/test-timings.mjs --test-reporter-destination=timings.json
// (run-tests.mjs then preloads the usage probe). The output is JSON, slowest file first, with CPU
// seconds (user + system) as the figure a busy machine does not inflate much.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export default async function* timings(source) {
  const files = new Map();
  const entry = (file) => {
    const key = relative(process.cwd(), file);
    if (!files.has(key)) files.set(key, { file: key, tests: 0, failed: 0, testWallSeconds: 0 });
    return files.get(key);
  };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file || nesting !== 0) continue;
    const row = entry(file);
    row.tests += 1;
    if (event.type === 'test:fail') row.failed += 1;
    row.testWallSeconds += (details?.duration_ms ?? 0) / 1000;
  }
  const usageDirectory = process.env.SWITCHYARD_TEST_USAGE_DIR;
  if (usageDirectory) {
    for (const name of readdirSync(usageDirectory)) {
      const usage = JSON.parse(readFileSync(join(usageDirectory, name), 'utf8'));
      const row = entry(usage.file);
      row.cpuSeconds = usage.cpuSeconds;
      row.processWallSeconds = usage.wallSeconds;
    }
  }
  const rows = [...files.values()]
    .map((row) => ({ ...row, testWallSeconds: Number(row.testWallSeconds.toFixed(2)) }))
    .sort((a, b) => (b.processWallSeconds ?? b.testWallSeconds) - (a.processWallSeconds ?? a.testWallSeconds));
  yield `${JSON.stringify(rows, null, 1)}\n`;
}
