/**
 * One chaos run, shared by the test and the benchmark: mixed traffic and a batch over the instances,
 * a quiet baseline, the six faults one after another (each healed, recovery measured, settled), then
 * the end state: the batch read back, every uploaded file downloaded again and compared, and the ledger
 * checked against every 200 the clients received.
 */
import { writeFileSync } from 'node:fs';
import { batchProgress, finishBatch, startBatch, type BatchResult } from './batch.ts';
import type { ChaosEnvironment } from './environment.ts';
import { faults, probeRoundMs, runFault, type FaultRun } from './faults.ts';
import type { UnexpectedExit } from './fleet.ts';
import { checkLedger, type LedgerCheck } from './ledger.ts';
import { download, METERED_KINDS, warmUp, type Outcome } from './requests.ts';
import { Traffic } from './traffic.ts';

export interface ChaosRunOptions {
  /** Scales every dependency outage (1: the issue's 15-20 s). Default 1. */
  scale?: number;
  /** Lines of the batch in progress. Default 260 (it ends around the last fault). */
  batchLines?: number;
  /** Traffic before the first fault. Default 4 s. */
  baselineMs?: number;
  /** Pause after each fault's recovery, before the next. Default 2 s. */
  settleMs?: number;
  /** How long the batch may take to end once the faults are over. Default 120 s. */
  batchWaitMs?: number;
  /** Writes every client outcome there, one JSON line each (`at`: ms since the run began). */
  outcomesFile?: string | undefined;
  /** Progress lines (each prefixed with the time since the run began). */
  log?: (line: string) => void;
}

export interface ChaosRun {
  started: number;
  faults: FaultRun[];
  outcomes: Outcome[];
  /** The end-of-run download of every uploaded file. */
  fileChecks: Outcome[];
  batch: BatchResult | { error: string };
  ledger: LedgerCheck;
  exits: UnexpectedExit[];
  /** Slowest of three recovery-probe rounds per instance in the baseline (traffic on, no fault), ms. */
  baselineProbeMs: number;
}

async function recheckFiles(environment: ChaosEnvironment, files: Array<{ id: string; sha256: string }>): Promise<Outcome[]> {
  const { fleet, key } = environment;
  const checks: Outcome[] = [];
  for (let index = 0; index < files.length; index += 4) {
    const slice = files.slice(index, index + 4);
    checks.push(
      ...(await Promise.all(
        slice.map((file, offset) => {
          const instance = (index + offset) % fleet.size;
          return download({ origin: fleet.origin(instance), instance, key }, file);
        }),
      )),
    );
  }
  return checks;
}

export async function runChaos(environment: ChaosEnvironment, options: ChaosRunOptions = {}): Promise<ChaosRun> {
  const started = Date.now();
  // Every line carries the time since the run began, the clock of the outcomes' descriptions too.
  const log = (line: string): void => options.log?.(`+${((Date.now() - started) / 1000).toFixed(1)} s ${line}`);
  const { fleet, key } = environment;
  const origins = Array.from({ length: fleet.size }, (_, index) => fleet.origin(index));
  const lines = options.batchLines ?? 260;
  const traffic = new Traffic(origins, key);
  const runs: FaultRun[] = [];
  let batchId: string | undefined;
  let baselineProbeMs = 0;
  await Promise.all(origins.map((origin, instance) => warmUp({ origin, instance, key })));
  traffic.start();
  try {
    batchId = await startBatch(origins[0]!, key, lines);
    log(`batch ${batchId}: ${lines} lines started`);
    const baselineEnds = Date.now() + (options.baselineMs ?? 4000);
    for (let round = 0; round < 3; round++)
      baselineProbeMs = Math.max(baselineProbeMs, ...(await Promise.all(origins.map((origin) => probeRoundMs(origin, key)))));
    log(`baseline: a recovery probe round takes up to ${baselineProbeMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, baselineEnds - Date.now())));
    for (const fault of faults(environment, options.scale ?? 1)) {
      runs.push(await runFault(environment, fault, options.settleMs ?? 2000, log));
      const progress = await batchProgress(origins[1]!, key, batchId).catch(() => undefined);
      log(`batch: ${progress === undefined ? 'progress unknown' : `${progress.status}, ${progress.done}/${progress.total} lines done`}`);
    }
  } finally {
    await traffic.stop();
  }
  log(`traffic stopped: ${traffic.outcomes.length} requests`);
  const batch: BatchResult | { error: string } =
    batchId === undefined
      ? { error: 'the batch was not created' }
      : await finishBatch(origins, key, batchId, lines, options.batchWaitMs ?? 120_000).catch((error: unknown) => ({
          error: String(error),
        }));
  log(`batch: ${'error' in batch ? batch.error : `${batch.status}, ${batch.failed.length} failed lines`}`);
  const fileChecks = await recheckFiles(environment, traffic.files);
  const expected = [
    ...traffic.outcomes.filter((outcome) => outcome.ok && METERED_KINDS.has(outcome.kind)).map((outcome) => outcome.requestId ?? ''),
    ...('error' in batch ? [] : batch.outputRequestIds),
  ];
  const ledger = await checkLedger(environment.postgres.url, expected, 8000);
  log(`ledger: ${ledger.rows} rows, ${ledger.missing.length} missing, ${ledger.duplicates.length} doubled`);
  if (options.outcomesFile !== undefined && options.outcomesFile !== '') {
    const all = [...traffic.outcomes, ...fileChecks].map((outcome) => JSON.stringify({ ...outcome, at: outcome.start - started }));
    writeFileSync(options.outcomesFile, `${all.join('\n')}\n`);
  }
  return { started, faults: runs, outcomes: traffic.outcomes, fileChecks, batch, ledger, exits: [...fleet.exits], baselineProbeMs };
}
