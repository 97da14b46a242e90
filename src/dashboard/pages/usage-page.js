// @ts-check
// The usage page: chart (uPlot), table, CSV, limits.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { CacheCard } from './cache-card.js';
import { html, dateTime, number, usd, compact, DataTable, ErrorNote, usePoll } from './components.js';

/** @typedef {import('./types.js').UsageRow} UsageRow */
/** @typedef {import('./types.js').UsageReport} UsageReport */
/** @typedef {UsageReport['by_key'][number]} KeyUsage */
/** @typedef {UsageReport['by_model'][number]} ModelUsage */
/** @typedef {import('./types.js').LimitInfo} LimitInfo */

const DAY_MS = 86_400_000;

/** Tokens and cost per day of the range, zero where nothing was used. @param {UsageRow[]} rows @param {string} from @param {string} to */
function perDay(rows, from, to) {
  const days = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += DAY_MS) days.push(at);
  const index = new Map(days.map((at, position) => [new Date(at).toISOString().slice(0, 10), position]));
  const tokens = days.map(() => 0);
  const cost = days.map(() => 0);
  for (const row of rows) {
    const position = index.get(row.date);
    if (position === undefined) continue;
    tokens[position] += row.input_tokens + row.output_tokens;
    cost[position] += row.cost_usd;
  }
  return { days, tokens, cost };
}

/** @param {{ rows: UsageRow[], from: string, to: string }} props */
function UsageChart({ rows, from, to }) {
  const container = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [costShown, setCostShown] = useState(true);
  useEffect(() => {
    if (!container.current) return undefined;
    const { days, tokens, cost } = perDay(rows, from, to);
    // With no cost in the range a cost axis would run $0-$100 (uPlot's range for all zeros): leave it out.
    const withCost = cost.some((value) => value > 0);
    const chart = new uPlot(
      {
        width: Math.max(280, container.current.clientWidth),
        height: 240,
        series: [
          {},
          { label: 'Tokens', stroke: '#2563eb', fill: 'rgba(37,99,235,0.12)', scale: 'tokens' },
          ...(withCost
            ? [
                {
                  label: 'Cost (USD)',
                  stroke: '#b45309',
                  scale: 'usd',
                  value: (/** @type {unknown} */ _u, /** @type {number | null} */ value) => (value === null ? '—' : `$${value.toFixed(4)}`),
                },
              ]
            : []),
        ],
        axes: [
          {},
          { scale: 'tokens', size: 56, values: (_u, ticks) => ticks.map((tick) => compact.format(tick)) },
          ...(withCost
            ? [
                {
                  scale: 'usd',
                  side: 1,
                  size: 64,
                  grid: { show: false },
                  values: (/** @type {unknown} */ _u, /** @type {number[]} */ ticks) => ticks.map((tick) => `$${tick}`),
                },
              ]
            : []),
        ],
      },
      withCost ? [days.map((at) => at / 1000), tokens, cost] : [days.map((at) => at / 1000), tokens],
      container.current,
    );
    setCostShown(withCost);
    return () => chart.destroy();
  }, [rows, from, to]);
  return html`<figure class="chart">
    <div ref=${container} role="img" aria-label=${costShown ? 'Tokens and cost per day' : 'Tokens per day'}></div>
    <figcaption>
      ${costShown ? 'Tokens (left axis) and cost (right axis) per day, UTC.' : 'Tokens per day, UTC. No cost in this range, so no cost axis.'}
    </figcaption>
  </figure>`;
}

/** @param {{ label: string, info: LimitInfo }} props */
function LimitMeter({ label, info }) {
  const unlimited = info.limit === 0;
  const testId = `usage-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return html`<div class="meter">
    <h3>${label}</h3>
    <p>
      <strong data-testid=${testId}>${number(info.used)}</strong>
      ${unlimited ? ' tokens used (no limit)' : ` tokens used of ${number(info.limit)}`}
    </p>
    ${
      unlimited
        ? null
        : html`<progress
          max=${info.limit}
          value=${Math.min(info.used, info.limit)}
          aria-label=${`${label}: ${info.used} of ${info.limit} tokens`}
        ></progress>`
    }
    <p class="muted">Resets ${dateTime(Date.parse(info.reset_at))}</p>
  </div>`;
}

/** @type {import('./components.js').Column<UsageRow>[]} */
const COLUMNS = [
  { label: 'Date', cell: (row) => row.date },
  { label: 'Model', cell: (row) => row.model },
  { label: 'Requests', cell: (row) => number(row.requests) },
  { label: 'Input tokens', cell: (row) => number(row.input_tokens) },
  { label: 'Output tokens', cell: (row) => number(row.output_tokens) },
  { label: 'Cost', cell: (row) => usd(row.cost_usd) },
];

/** @param {number | null} value */
const limit = (value) => (value === null ? '—' : value === 0 ? 'unlimited' : number(value));

/** The organization's limits, stated once: the plan's figures and the rule they follow. @param {{ report: UsageReport }} props */
function LimitsCard({ report }) {
  const plan = report.plan;
  return html`<section class="card" aria-labelledby="limits-title">
    <h2 id="limits-title">Limits of ${report.organization}: ${plan ? `${plan.tier} plan${plan.custom ? ' (custom)' : ''}` : "each key's tier"}</h2>
    <p data-testid="limits-rule">${report.limits_rule}</p>
    ${
      plan
        ? html`<dl class="facts">
          <dt>Tokens per day (organization)</dt>
          <dd>${limit(plan.tokens_per_day)}</dd>
          <dt>Tokens per month (organization)</dt>
          <dd>${limit(plan.tokens_per_month)}</dd>
          <dt>Concurrent batches (organization)</dt>
          <dd>${plan.concurrent_batches === 0 ? 'no batch API' : number(plan.concurrent_batches)}</dd>
          <dt>Requests per batch (organization)</dt>
          <dd>${number(plan.max_requests_per_batch)}</dd>
          <dt>Requests per minute (per key, at most)</dt>
          <dd>${limit(plan.requests_per_minute)}</dd>
          <dt>Tokens per minute (per key, at most)</dt>
          <dd>${limit(plan.tokens_per_minute)}</dd>
        </dl>`
        : null
    }
  </section>`;
}

/** @type {import('./components.js').Column<ModelUsage>[]} */
const MODEL_COLUMNS = [
  { label: 'Model', cell: (row) => row.model },
  { label: 'Requests', cell: (row) => number(row.requests) },
  { label: 'Input tokens', cell: (row) => number(row.input_tokens) },
  { label: 'Output tokens', cell: (row) => number(row.output_tokens) },
  { label: 'Cost', cell: (row) => usd(row.cost_usd) },
];

/** @type {import('./components.js').Column<KeyUsage>[]} */
const KEY_COLUMNS = [
  {
    label: 'Key',
    cell: (row) => html`${row.name ?? 'unknown key'}${' '}
      <code>${row.prefix ?? row.key_id}</code>`,
  },
  { label: 'Requests', cell: (row) => number(row.requests) },
  { label: 'Input tokens', cell: (row) => number(row.input_tokens) },
  { label: 'Output tokens', cell: (row) => number(row.output_tokens) },
  { label: 'Cost', cell: (row) => usd(row.cost_usd) },
  { label: 'Requests/min limit', cell: (row) => limit(row.requests_per_minute) },
  { label: 'Tokens/min limit', cell: (row) => limit(row.tokens_per_minute) },
];

/** @param {import('./types.js').PageProps} props */
export function UsagePage({ session }) {
  const [days, setDays] = useState(30);
  /** @type {[import('./components.js').Polled<import('./types.js').UsageReport>, () => void]} */
  const [{ data, error }] = usePoll(`usage?days=${days}`, 15_000);
  if (!data)
    return html`<main>
      <h1>Usage</h1>
      <${ErrorNote} error=${error} />
      <p>Loading…</p>
    </main>`;
  const totals = data.totals;
  return html`<main>
    <h1>Usage</h1>
    <${ErrorNote} error=${error} />
    <section class="meters" aria-label="Usage against limits">
      <${LimitMeter} label="Today" info=${data.limits.daily} />
      <${LimitMeter} label="This month" info=${data.limits.monthly} />
    </section>
    <${LimitsCard} report=${data} />
    <div class="toolbar">
      <label for="range">Range</label>
      <select
        id="range"
        value=${days}
        onChange=${(/** @type {Event} */ event) => setDays(Number(/** @type {HTMLSelectElement} */ (event.currentTarget).value))}
      >
        <option value="7">Last 7 days</option>
        <option value="30">Last 30 days</option>
        <option value="90">Last 90 days</option>
        <option value="365">Last 365 days</option>
      </select>
      <a class="button" href=${`/dashboard/api/usage.csv?days=${days}`} download>Export CSV</a>
    </div>
    <${UsageChart} rows=${data.data} from=${data.from} to=${data.to} />
    <${CacheCard} days=${days} owner=${session.role === 'owner'} />
    <h2>Per key</h2>
    <${DataTable}
      label="Usage per key"
      columns=${KEY_COLUMNS}
      rows=${data.by_key}
      rowKey=${(/** @type {KeyUsage} */ row) => row.key_id}
      empty="No usage in this range."
    />
    <h2>Per model</h2>
    <${DataTable}
      label="Usage per model"
      columns=${MODEL_COLUMNS}
      rows=${data.by_model}
      rowKey=${(/** @type {ModelUsage} */ row) => row.model}
      empty="No usage in this range."
    />
    <h2>Per day and model</h2>
    <${DataTable}
      label="Usage per day and model"
      columns=${COLUMNS}
      rows=${data.data.slice().reverse()}
      rowKey=${(/** @type {UsageRow} */ row) => `${row.date}-${row.model}`}
      empty="No usage in this range."
      footer=${html`<tr>
        <th scope="row" colspan="2">Total</th>
        <td>${number(totals.requests)}</td>
        <td>${number(totals.input_tokens)}</td>
        <td>${number(totals.output_tokens)}</td>
        <td>${usd(totals.cost_usd)}</td>
      </tr>`}
    />
  </main>`;
}
