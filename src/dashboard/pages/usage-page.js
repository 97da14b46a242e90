// The usage page: chart (uPlot), table, CSV, limits.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api } from './api.js';
import { html, dateTime, number, usd, compact, ErrorNote, usePoll } from './components.js';

function UsageChart({ rows, from, to }) {
  const container = useRef(null);
  useEffect(() => {
    if (!container.current) return undefined;
    const dayMs = 86_400_000;
    const start = Date.parse(`${from}T00:00:00Z`);
    const end = Date.parse(`${to}T00:00:00Z`);
    const days = [];
    for (let at = start; at <= end; at += dayMs) days.push(at);
    const index = new Map(days.map((at, position) => [new Date(at).toISOString().slice(0, 10), position]));
    const tokens = days.map(() => 0);
    const cost = days.map(() => 0);
    for (const row of rows) {
      const position = index.get(row.date);
      if (position === undefined) continue;
      tokens[position] += row.input_tokens + row.output_tokens;
      cost[position] += row.cost_usd;
    }
    const width = Math.max(280, container.current.clientWidth);
    const chart = new uPlot(
      {
        width,
        height: 240,
        series: [
          {},
          { label: 'Tokens', stroke: '#2563eb', fill: 'rgba(37,99,235,0.12)', scale: 'tokens' },
          { label: 'Cost (USD)', stroke: '#b45309', scale: 'usd', value: (_u, value) => (value === null ? '—' : `$${value.toFixed(4)}`) },
        ],
        axes: [
          {},
          { scale: 'tokens', size: 56, values: (_u, ticks) => ticks.map((tick) => compact.format(tick)) },
          { scale: 'usd', side: 1, size: 64, grid: { show: false }, values: (_u, ticks) => ticks.map((tick) => `$${tick}`) },
        ],
      },
      [days.map((at) => at / 1000), tokens, cost],
      container.current,
    );
    return () => chart.destroy();
  }, [rows, from, to]);
  return html`<figure class="chart"><div ref=${container} role="img" aria-label="Tokens and cost per day"></div><figcaption>Tokens (left axis) and cost (right axis) per day, UTC.</figcaption></figure>`;
}

function LimitMeter({ label, info }) {
  const unlimited = info.limit === 0;
  return html`<div class="meter">
    <h3>${label}</h3>
    <p><strong data-testid=${`usage-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`}>${number(info.used)}</strong> tokens used ${unlimited ? '(no limit)' : `of ${number(info.limit)}`}</p>
    ${unlimited ? null : html`<progress max=${info.limit} value=${Math.min(info.used, info.limit)} aria-label=${`${label}: ${info.used} of ${info.limit} tokens`}></progress>`}
    <p class="muted">Resets ${dateTime(Date.parse(info.reset_at))}</p>
  </div>`;
}

export function UsagePage() {
  const [days, setDays] = useState(30);
  const load = useCallback(() => api(`usage?days=${days}`), [days]);
  const [{ data, error }] = usePoll(load, 15_000);
  return html`<main>
    <h1>Usage</h1>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<section class="meters" aria-label="Usage against limits">
          <${LimitMeter} label="Today" info=${data.limits.daily} />
          <${LimitMeter} label="This month" info=${data.limits.monthly} />
          <p class="muted">Daily and monthly limits of ${data.organization}'s ${data.limits.tier} plan, shared by all its keys; per-minute limits are each key's tier, never above the plan.</p>
        </section>
        <div class="toolbar">
          <label for="range">Range</label>
          <select id="range" value=${days} onChange=${(event) => setDays(Number(event.currentTarget.value))}>
            <option value="7">Last 7 days</option><option value="30">Last 30 days</option><option value="90">Last 90 days</option><option value="365">Last 365 days</option>
          </select>
          <a class="button" href=${`/dashboard/api/usage.csv?days=${days}`} download>Export CSV</a>
        </div>
        <${UsageChart} rows=${data.data} from=${data.from} to=${data.to} />
        <div class="table-wrap"><table aria-label="Usage per day and model">
          <thead><tr><th scope="col">Date</th><th scope="col">Model</th><th scope="col">Requests</th><th scope="col">Input tokens</th><th scope="col">Output tokens</th><th scope="col">Cost</th></tr></thead>
          <tbody>
            ${data.data.length === 0 ? html`<tr><td colspan="6">No usage in this range.</td></tr>` : null}
            ${data.data
              .slice()
              .reverse()
              .map(
                (row) =>
                  html`<tr key=${`${row.date}-${row.model}`}><td>${row.date}</td><td>${row.model}</td><td>${number(row.requests)}</td><td>${number(row.input_tokens)}</td><td>${number(row.output_tokens)}</td><td>${usd(row.cost_usd)}</td></tr>`,
              )}
          </tbody>
          <tfoot><tr><th scope="row" colspan="2">Total</th><td>${number(data.totals.requests)}</td><td>${number(data.totals.input_tokens)}</td><td>${number(data.totals.output_tokens)}</td><td>${usd(data.totals.cost_usd)}</td></tr></tfoot>
        </table></div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}
