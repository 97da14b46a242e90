// A test reporter that records, per test file, the wall time of its top-level tests and, when the files
// ran with scripts/test-process-usage.mjs preloaded, the CPU time and wall time of the file's own process
// and the CPU time of the child processes it waited for (servers and CLIs it started).
// `npm test -- --timings=FILE` (scripts/run-tests.mjs) runs it beside the spec reporter and preloads the
// probe. The output is JSON, slowest file first; CPU seconds (user + system) are the figure a busy
// machine inflates least, wall seconds give the schedule's order.
import { readdirSync, readFileSync } from 'node:fs';
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
      if (usage.childCpuSeconds !== undefined) row.childCpuSeconds = usage.childCpuSeconds;
      row.processWallSeconds = usage.wallSeconds;
      if (usage.slotWaitSeconds !== undefined) row.slotWaitSeconds = usage.slotWaitSeconds;
    }
  }
  const rows = [...files.values()]
    .map((row) => ({ ...row, testWallSeconds: Number(row.testWallSeconds.toFixed(2)) }))
    .sort((a, b) => (b.processWallSeconds ?? b.testWallSeconds) - (a.processWallSeconds ?? a.testWallSeconds));
  yield `${JSON.stringify(rows, null, 1)}\n`;
}
