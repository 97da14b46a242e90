/**
 * What pricing costs per request: ns per call of `costMicroUsd` (every ledger record) and
 * `worstCaseCostMicroUsd` (what a budget reserves at admission), on a frozen card as the config gives
 * (converted to exact units once), with every category in use: cache reads and both cache writes,
 * reasoning, a long-context entry, a per-request fee. Baseline, in the same run: the float formula
 * the ledger used before (input, cached input and output prices, batch factor, rounded to nano-USD).
 * Rounds alternate; the median round is printed.
 *
 *   node --import tsx bench/price-card.ts [rounds]
 */
import { answeredUsage } from '../src/core/usage.ts';
import { costMicroUsd, worstCaseCostMicroUsd, type PriceCard } from '../src/services/metering/price-card.ts';

const rounds = Number(process.argv[2] ?? 9);
const CALLS = 200_000;

const card: PriceCard = Object.freeze({
  inputPerMillion: 3,
  outputPerMillion: 15,
  cachedInputPerMillion: 0.3,
  cacheWrite5mPerMillion: 3.75,
  cacheWrite1hPerMillion: 6,
  reasoningPerMillion: 15,
  perRequest: 0.0001,
  batchFactor: 0.5,
  longContext: Object.freeze([Object.freeze({ aboveInputTokens: 200_000, inputPerMillion: 6, outputPerMillion: 22.5 })]),
});
// Varied figures, so that nothing is constant-folded.
const usages = Array.from({ length: 64 }, (_, index) =>
  answeredUsage({
    inputTokens: 3000 + index * 97,
    cachedInputTokens: 1500 + index * 13,
    cacheWriteInputTokens: 400 + index,
    cacheWrite1hInputTokens: 100 + index,
    outputTokens: 500 + index * 7,
    reasoningTokens: 200 + index,
  }),
);

/** The ledger's former pricing: float arithmetic, rounded to nano-USD. */
function floatPrice(usage: (typeof usages)[number], batch: boolean): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const full =
    ((usage.inputTokens - cached) * card.inputPerMillion +
      cached * card.cachedInputPerMillion! +
      usage.outputTokens * card.outputPerMillion) /
    1_000_000;
  return Math.round((batch ? full * 0.5 : full) * 1e9) / 1e9;
}

function nsPerCall(run: (index: number) => number): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let index = 0; index < CALLS; index++) sink += run(index);
  const elapsed = Number(process.hrtime.bigint() - started);
  if (sink === -1) console.log(sink);
  return elapsed / CALLS;
}

const cases: Record<string, (index: number) => number> = {
  costMicroUsd: (index) => costMicroUsd(usages[index & 63]!, card, { batch: (index & 1) === 1 }),
  worstCaseCostMicroUsd: (index) =>
    worstCaseCostMicroUsd({ promptTokens: 3000 + (index & 63), maxOutputTokens: 4096 }, card, { batch: false }),
  'baseline: float price (before)': (index) => floatPrice(usages[index & 63]!, (index & 1) === 1),
};

// Warm-up: every case to its JIT steady state.
for (const run of Object.values(cases)) nsPerCall(run);
const figures: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  const names = Object.keys(cases);
  for (const name of round % 2 === 0 ? names : names.reverse()) figures[name]!.push(nsPerCall(cases[name]!));
}
const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
console.log(`ns per call, median of ${rounds} rounds of ${CALLS.toLocaleString('en-US')} calls (Node ${process.version})`);
for (const [name, values] of Object.entries(figures)) console.log(`${name.padEnd(32)} ${median(values).toFixed(0).padStart(6)}`);
