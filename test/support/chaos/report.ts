/**
 * What a chaos run shows, fault by fault: requests, failures, p50 / max latency, the fail-fast median
 * (median duration of the refusals started while the dependency was down), recovery (slowest
 * instance), ledger rows missing; and the checks the suite asserts: per-request bounds, stream
 * integrity, the SIGKILL window. The table is printed by the test and by bench/dependency-faults.ts.
 */
import { LONGEST_DEPENDENCY_BOUND_MS } from './environment.ts';
import { VICTIM, type FaultRun } from './faults.ts';
import type { Outcome, RequestKind } from './requests.ts';
import type { ChaosRun } from './run.ts';

/** How long each kind takes with every dependency healthy (generous: a shared 2-core machine). */
const NORMAL_MS: Record<RequestKind, number> = {
  'chat-echo': 1000,
  'chat-echo-stream': 1000,
  'messages-stream': 1000,
  'responses-stream': 1000,
  embeddings: 1000,
  'chat-slow': 2000,
  'chat-slow-stream': 2500,
  'file-upload': 1500,
  'file-download': 1500,
};

/** Added to every bound: scheduling noise on a loaded machine. */
export const BOUND_MARGIN_MS = 2000;

/**
 * The longest a request of `kind` may take: its normal time + the longest dependency bound + the
 * margin. The normal time is the larger of the figure above and the slowest request of that kind in
 * the run's own baseline (traffic on, no fault yet), so a machine busy with other work stretches the
 * bound as it stretches every request, while a request that waits out an outage unbounded (15-20 s)
 * stays far above it.
 */
export function boundOf(kind: RequestKind, run?: Pick<ChaosRun, 'outcomes' | 'faults'>): number {
  const firstFault = run?.faults[0]?.began ?? Number.NEGATIVE_INFINITY;
  const baseline = (run?.outcomes ?? []).filter((outcome) => outcome.kind === kind && outcome.ok && outcome.end < firstFault);
  const normal = Math.max(NORMAL_MS[kind], ...baseline.map((outcome) => outcome.durationMs));
  return normal + LONGEST_DEPENDENCY_BOUND_MS + BOUND_MARGIN_MS;
}

export interface PhaseRow {
  name: string;
  requests: number;
  failures: number;
  p50Ms: number;
  maxMs: number;
  /** Median duration of the refusals started during the outage; undefined when there were none. */
  failFastMedianMs: number | undefined;
  refusals: number;
  /** Slowest instance's recovery, seconds; undefined when one did not recover (or for the baseline). */
  recoverySeconds: number | undefined;
  recoveredAll: boolean;
  ledgerMissing: number;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** A refusal: any answer but a good 200 (error statuses, and no answer at all). */
function refused(outcome: Outcome): boolean {
  return outcome.status !== 200;
}

function row(name: string, outcomes: Outcome[], missing: Set<string>, fault: FaultRun | undefined): PhaseRow {
  const durations = outcomes.map((outcome) => outcome.durationMs);
  const refusals =
    fault === undefined
      ? []
      : outcomes.filter((outcome) => refused(outcome) && outcome.start >= fault.began && outcome.start <= fault.healed);
  const recovered = fault?.recoveryMs.every((ms) => ms !== undefined) ?? true;
  return {
    name,
    requests: outcomes.length,
    failures: outcomes.filter((outcome) => !outcome.ok).length,
    p50Ms: median(durations),
    maxMs: Math.max(0, ...durations),
    failFastMedianMs: refusals.length === 0 ? undefined : median(refusals.map((outcome) => outcome.durationMs)),
    refusals: refusals.length,
    recoverySeconds: fault === undefined || !recovered ? undefined : Math.max(...fault.recoveryMs.map((ms) => ms!)) / 1000,
    recoveredAll: recovered,
    ledgerMissing: outcomes.filter((outcome) => outcome.requestId !== undefined && missing.has(outcome.requestId)).length,
  };
}

/** The baseline and one row per fault; an outcome belongs to the phase in which it started. */
export function phaseRows(run: ChaosRun): PhaseRow[] {
  const missing = new Set(run.ledger.missing);
  const rows: PhaseRow[] = [];
  let from = run.started;
  const phases: Array<{ name: string; until: number; fault: FaultRun | undefined }> = [
    { name: 'baseline (no fault)', until: run.faults[0]?.began ?? Infinity, fault: undefined },
    ...run.faults.map((fault, index) => ({ name: fault.name, until: run.faults[index + 1]?.began ?? Infinity, fault })),
  ];
  for (const phase of phases) {
    const outcomes = run.outcomes.filter((outcome) => outcome.start >= from && outcome.start < phase.until);
    rows.push(row(phase.name, outcomes, missing, phase.fault));
    from = phase.until;
  }
  return rows;
}

export function formatTable(rows: PhaseRow[]): string {
  const header = [
    'phase',
    'requests',
    'failures',
    'p50 ms',
    'max ms',
    'fail-fast median ms (refusals)',
    'recovery s',
    'ledger rows missing',
  ];
  const body = rows.map((entry) => [
    entry.name,
    String(entry.requests),
    String(entry.failures),
    String(entry.p50Ms),
    String(entry.maxMs),
    entry.failFastMedianMs === undefined ? '- (0)' : `${entry.failFastMedianMs} (${entry.refusals})`,
    entry.name.startsWith('baseline') ? '-' : entry.recoverySeconds === undefined ? 'NONE' : entry.recoverySeconds.toFixed(2),
    String(entry.ledgerMissing),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** Outcomes that took longer than their bound. */
export function overBound(run: ChaosRun): Outcome[] {
  return run.outcomes.filter((outcome) => outcome.durationMs > boundOf(outcome.kind, run));
}

/**
 * The SIGKILL window: ledger rows missing for answers the killed instance gave shortly before it died
 * (its buffered, not yet flushed rows). Returns the excused request ids and the window measured (ms
 * from the earliest such answer's end to the kill).
 */
export function killWindow(run: ChaosRun): { excused: Set<string>; windowMs: number } {
  const kill = run.faults.find((fault) => fault.dependency === 'instance');
  const missing = new Set(run.ledger.missing);
  if (kill === undefined) return { excused: new Set(), windowMs: 0 };
  const lost = run.outcomes.filter(
    (outcome) =>
      outcome.instance === VICTIM &&
      outcome.requestId !== undefined &&
      missing.has(outcome.requestId) &&
      outcome.end <= kill.injected &&
      outcome.end >= kill.injected - 5000,
  );
  return {
    excused: new Set(lost.map((outcome) => outcome.requestId!)),
    windowMs: lost.length === 0 ? 0 : kill.injected - Math.min(...lost.map((outcome) => outcome.end)),
  };
}

/** One outcome as a line for a failure message. */
export function describe(outcome: Outcome, run: ChaosRun): string {
  const at = ((outcome.start - run.started) / 1000).toFixed(1);
  const phase = [...run.faults].reverse().find((fault) => fault.began <= outcome.start)?.name ?? 'baseline';
  return (
    `${outcome.kind} on instance ${outcome.instance} at +${at} s (${phase}): ${outcome.status} ${outcome.error ?? ''} ` +
    `${outcome.durationMs} ms${outcome.problem === undefined ? '' : `, ${outcome.problem}`}` +
    `${outcome.bytesAfterEnd > 0 ? `, ${outcome.bytesAfterEnd} bytes after the end event` : ''} [${outcome.requestId ?? 'no request id'}]`
  );
}
