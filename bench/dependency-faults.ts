/**
 * Dependency faults, fault by fault: the chaos suite's harness (test/support/chaos/) run as a
 * measurement. Two `switchyard serve` processes on a private Postgres (initdb/pg_ctl, free port), a
 * private redis-server and s3rver, under steady mixed traffic with a batch in progress, through a
 * Postgres restart, Postgres frozen, Redis killed, Redis frozen, the object store killed and one
 * instance SIGKILLed. Prints per fault: requests, failures, p50 / max latency, the fail-fast median
 * (refusals started while the dependency was down), recovery seconds (slowest instance, heal to
 * serving) and ledger rows missing; then the end state (batch, files, ledger, exits). Figures are
 * printed, never asserted (test/chaos/dependency-faults.test.ts asserts them).
 *
 * Run: node --import tsx bench/dependency-faults.ts [scale] [batchLines]
 *      (scale multiplies each dependency outage: 1 = the issue's 15-20 s, about 2.5 minutes in all;
 *       0.25 about 1.5 minutes, the batch then finishing after the faults; batchLines default 260;
 *       CHAOS_OUTCOMES=<file> writes every client outcome there, one JSON line each)
 */
import { canRunChaos, ChaosEnvironment, DEPENDENCY_BOUNDS_MS } from '../test/support/chaos/environment.ts';
import { formatTable, killWindow, overBound, phaseRows } from '../test/support/chaos/report.ts';
import { runChaos } from '../test/support/chaos/run.ts';

const scale = Number(process.argv[2] ?? 1);
const batchLines = Number(process.argv[3] ?? 260);
if (!canRunChaos) {
  console.error('Needs the initdb, pg_ctl, postgres and redis-server binaries on PATH (it starts its own servers).');
  process.exit(1);
}

const environment = await ChaosEnvironment.start();
try {
  const run = await runChaos(environment, {
    scale,
    batchLines,
    log: (line) => console.log(line),
    outcomesFile: process.env['CHAOS_OUTCOMES'],
  });
  console.log(
    `\nDependency bounds: ${Object.entries(DEPENDENCY_BOUNDS_MS)
      .map(([name, ms]) => `${name}=${ms}`)
      .join(' ')}`,
  );
  console.log(`Outages scaled by ${scale}; clients call the instances directly (no balancer).\n`);
  console.log(formatTable(phaseRows(run)));
  const window = killWindow(run);
  const batch =
    'error' in run.batch
      ? run.batch.error
      : `${run.batch.status}, ${run.batch.lines} lines, ${run.batch.missing.length} missing, ${run.batch.duplicates.length} twice, ${run.batch.failed.length} failed`;
  console.log(`
Batch: ${batch}
Files: ${run.fileChecks.length} uploaded, ${run.fileChecks.filter((check) => !check.ok).length} not read back intact
Ledger: ${run.ledger.rows} rows, ${run.ledger.missing.length} expected rows missing (${window.excused.size} in the SIGKILL window of ${window.windowMs} ms), ${run.ledger.duplicates.length} request ids with two rows
Streams with bytes after their end event: ${run.outcomes.filter((outcome) => outcome.bytesAfterEnd > 0).length}
Requests over their bound: ${overBound(run).length}
Failed batch lines (first 3): ${'error' in run.batch ? '-' : JSON.stringify(run.batch.failed.slice(0, 3))}
Instances that exited unasked: ${run.exits.length === 0 ? 'none' : run.exits.map((exit) => `instance ${exit.instance} (${exit.code ?? exit.signal})`).join(', ')}`);
} finally {
  await environment.close();
}
