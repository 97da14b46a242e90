// Which test files share one process (scripts/run-tests.mjs). Importing the code under test costs each
// test process CPU seconds of its own (the module graph, compiled or read from the cache), so the pure
// unit folders below run as a few processes, one per group, instead of one per file: their files start no
// server, set no environment variable and leave no global state behind (no mocked timers or modules),
// and every handle they open they close. A file that does not hold to that belongs in no group.
// The group's process imports its files one after another (Node's runner then runs their tests in order,
// like `--test-isolation=none`); events keep each test's own file, line and name, so a failure names
// them and `--test-name-pattern` selects as before. A top-level `after` runs when the whole group ends.
// Everything else runs in a process of its own. test/db, test/files and test/batches would share one too
// but gain little (14.2 -> 10.8 CPU-s) and, waiting on Postgres, make a 115 s process, the run's longest.
//
// WAITING lists files that mostly wait (outages held for seconds, timers, multi-instance start-ups,
// slow clients): their process wall time is several times the CPU they and their children use
// (scripts/test-durations.json). They run beside the CPU-bound files instead of holding one of the
// CPU slots (scripts/test-cpu-slot.mjs); a waiting file is in no group.
export const GROUPS = {
  formats: ['test/formats'],
  units: ['test/core', 'test/config', 'test/http', 'test/telemetry', 'test/limits', 'test/house'],
  services: ['test/services'],
  providers: ['test/providers'],
};

export const WAITING = [
  // The two longest files: held outages and several instances starting, at a third and a half of a core
  // (2026-11-29 quiet run: 94 s for 29 CPU-s, 69 s for 37); in a CPU slot they held it for the run's first
  // minute and a half.
  'test/chaos/dependency-faults.test.ts',
  'test/e2e/multi-instance.test.ts',
  'test/dashboard/dashboard-api.test.ts',
  'test/dashboard/alerts-browser.test.ts',
  'test/chaos/batch-object-store-outage.test.ts',
  'test/chaos/outage-dependencies.test.ts',
  'test/chaos/outage-postgres-instance.test.ts',
  'test/scripts/start-signals.test.ts',
  'test/e2e/budgets.test.ts',
  'test/e2e/slow-clients.test.ts',
  'test/e2e/upstream-faults.test.ts',
  'test/files/blob-store.test.ts',
  'test/batches/line-outcome-recording.test.ts',
];

/** The group a file (a path relative to the project) belongs to, or undefined; a waiting file has none. */
export function groupOf(file) {
  if (WAITING.includes(file)) return undefined;
  for (const [name, folders] of Object.entries(GROUPS)) {
    if (folders.some((folder) => file === folder || file.startsWith(`${folder}/`))) return name;
  }
  return undefined;
}
