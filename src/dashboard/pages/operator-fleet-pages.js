// @ts-check
// The operator area's service-wide pages: plans (the configured tiers, read-only, with how many
// organizations are on each), fleet (instances alive from their heartbeat rows; routed deployments as
// `switchyard routes` shows them) and the operators' audit log (paged back with "Older").
import { useState } from 'preact/hooks';
import { AuditDetail } from './audit-detail.js';
import { html, bytes, dateTime, number, DataTable, ErrorNote, usePoll } from './components.js';

/** @typedef {Record<string, any>} Json */

/** @param {number} value */
const limit = (value) => (value === 0 ? 'unlimited' : number(value));

export function PlansPage() {
  /** @type {[import('./components.js').Polled<Json>, () => void]} */
  const [{ data, error }] = usePoll('operator/plans', 0);
  /** @type {import('./components.js').Column<Json>[]} */
  const columns = [
    { label: 'Plan', cell: (tier) => html`<strong>${tier.name}${tier.name === data?.default_tier ? ' (default)' : ''}</strong>` },
    { label: 'Organizations', cell: (tier) => tier.organizations },
    { label: 'Requests/min', cell: (tier) => limit(tier.requests_per_minute) },
    { label: 'Tokens/min', cell: (tier) => limit(tier.tokens_per_minute) },
    { label: 'Tokens/day', cell: (tier) => limit(tier.tokens_per_day) },
    { label: 'Tokens/month', cell: (tier) => limit(tier.tokens_per_month) },
    { label: 'Concurrent batches', cell: (tier) => (tier.concurrent_batches === 0 ? 'no batch API' : number(tier.concurrent_batches)) },
    { label: 'Requests per batch', cell: (tier) => number(tier.max_requests_per_batch) },
    { label: 'Active keys', cell: (tier) => limit(tier.max_active_keys) },
    { label: 'Storage', cell: (tier) => (tier.storage_quota_bytes === 0 ? 'unlimited' : bytes(tier.storage_quota_bytes)) },
    { label: 'Permissions', className: 'permissions', cell: (tier) => tier.permissions.join(', ') },
  ];
  return html`<main>
    <h1>Plans</h1>
    <p class="muted">
      The tiers of the configuration (read-only; change them in the config and restart). Per-organization overrides are set on an
      organization's page. Requests and tokens per minute are per key; the day and month quotas and batch figures are the
      organization's.
    </p>
    <${ErrorNote} error=${error} />
    <${DataTable} label="Plans" columns=${columns} rows=${data?.data} rowKey=${(/** @type {Json} */ tier) => tier.name} />
  </main>`;
}

/** @type {import('./components.js').Column<Json>[]} */
const INSTANCE_COLUMNS = [
  { label: 'Instance', cell: (instance) => html`<code>${instance.id}</code>` },
  { label: 'Version', cell: (instance) => instance.version },
  { label: 'Started', cell: (instance) => dateTime(instance.started_at) },
  { label: 'Last seen', cell: (instance) => `${new Date(instance.last_seen_at).toISOString().slice(11, 19)} UTC` },
];

/** @param {Json} row */
function health(row) {
  if (row.live === null) return 'direct';
  return row.live.cooling_until ? `cooling until ${row.live.cooling_until.slice(11, 19)}` : 'healthy';
}

/** @type {import('./components.js').Column<Json>[]} */
const DEPLOYMENT_COLUMNS = [
  { label: 'Model', cell: (row) => row.model },
  { label: 'Strategy', cell: (row) => row.strategy },
  { label: 'Deployment', cell: (row) => row.deployment },
  { label: 'Upstream model', cell: (row) => row.upstream_model },
  { label: 'Weight', cell: (row) => row.weight },
  {
    label: 'Requests this minute',
    cell: (row) =>
      `${row.live ? row.live.requests_this_minute : '—'}${row.requests_per_minute_limit ? ` / ${number(row.requests_per_minute_limit)}` : ''}`,
  },
  {
    label: 'Tokens this minute',
    cell: (row) =>
      `${row.live ? number(row.live.tokens_this_minute) : '—'}${row.tokens_per_minute_limit ? ` / ${number(row.tokens_per_minute_limit)}` : ''}`,
  },
  { label: 'In flight', cell: (row) => (row.live ? row.live.in_flight : '—') },
  { label: 'Health', cell: health },
  { label: 'Latency', cell: (row) => (row.live?.latency_ms == null ? '—' : `${row.live.latency_ms} ms`) },
];

export function FleetPage() {
  /** @type {[import('./components.js').Polled<Json>, () => void]} */
  const [{ data, error }] = usePoll('operator/fleet', 5000);
  return html`<main>
    <h1>Fleet</h1>
    <${ErrorNote} error=${error} />
    <h2>Instances alive</h2>
    <p class="muted">Each instance renews its row every 5 seconds; one not seen for 15 seconds is left out.</p>
    <${DataTable} label="Instances" columns=${INSTANCE_COLUMNS} rows=${data?.instances} rowKey=${(/** @type {Json} */ row) => row.id} />
    <h2>Routed deployments</h2>
    ${data && !data.shared_routing_state ? html`<p class="muted">No Redis: the live figures are this instance's own.</p>` : null}
    <${DataTable}
      label="Deployments"
      columns=${DEPLOYMENT_COLUMNS}
      rows=${data?.deployments}
      rowKey=${(/** @type {Json} */ row) => `${row.model}-${row.deployment}`}
      empty="No routed models."
    />
  </main>`;
}

/** @type {import('./components.js').Column<Json>[]} */
const AUDIT_COLUMNS = [
  { label: 'When', className: 'nowrap', cell: (entry) => dateTime(entry.created_at) },
  { label: 'Who', cell: (entry) => entry.actor },
  { label: 'Action', cell: (entry) => entry.action },
  { label: 'Organization', cell: (entry) => entry.organization ?? '—' },
  { label: 'Target', cell: (entry) => entry.target ?? '—' },
  { label: 'Detail', className: 'audit-detail-cell', cell: (entry) => html`<${AuditDetail} detail=${entry.detail} />` },
  { label: 'From', cell: (entry) => entry.address ?? '—' },
];

export function OperatorAuditPage() {
  const [before, setBefore] = useState(/** @type {number | undefined} */ (undefined));
  /** @type {[import('./components.js').Polled<Json>, () => void]} */
  const [{ data, error }] = usePoll(`operator/audit?limit=50${before ? `&before=${before}` : ''}`, 0);
  /** @type {Json[]} */
  const entries = data?.data ?? [];
  return html`<main>
    <h1>Operator audit log</h1>
    <p class="muted">What operators changed (console and CLI), kept apart from the organizations' own logs.</p>
    <${ErrorNote} error=${error} />
    <${DataTable}
      label="Operator audit log"
      columns=${AUDIT_COLUMNS}
      rows=${data?.data}
      rowKey=${(/** @type {Json} */ entry) => entry.id}
      empty="No operator has changed anything yet."
    />
    <div class="toolbar">
      ${before ? html`<button type="button" onClick=${() => setBefore(undefined)}>Newest</button>` : null}
      ${data?.has_more ? html`<button type="button" onClick=${() => setBefore(entries[entries.length - 1]?.id)}>Older</button>` : null}
    </div>
  </main>`;
}
