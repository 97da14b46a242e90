// The operator area's service-wide pages: plans (the configured tiers, read-only, with how many
// organizations are on each), fleet (instances alive from their heartbeat rows; routed deployments as
// `switchyard routes` shows them) and the operators' audit log (paged back with "Older").
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, dateTime, number, ErrorNote, usePoll } from './components.js';

const limit = (value) => (value === 0 ? 'unlimited' : number(value));

export function PlansPage() {
  const load = useCallback(() => api('operator/plans'), []);
  const [{ data, error }] = usePoll(load, 0);
  return html`<main>
    <h1>Plans</h1>
    <p class="muted">The tiers of the configuration (read-only; change them in the config and restart). Per-organization overrides are set on an organization's page. Requests and tokens per minute are per key; the day and month quotas and batch figures are the organization's.</p>
    <${ErrorNote} error=${error} />
    <div class="table-wrap"><table aria-label="Plans">
      <thead><tr><th>Plan</th><th>Organizations</th><th>Requests/min</th><th>Tokens/min</th><th>Tokens/day</th><th>Tokens/month</th><th>Concurrent batches</th><th>Requests per batch</th><th>Permissions</th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (
          tier,
        ) => html`<tr key=${tier.name}><th scope="row">${tier.name}${tier.name === data.default_tier ? ' (default)' : ''}</th><td>${tier.organizations}</td>
          <td>${limit(tier.requests_per_minute)}</td><td>${limit(tier.tokens_per_minute)}</td><td>${limit(tier.tokens_per_day)}</td><td>${limit(tier.tokens_per_month)}</td>
          <td>${tier.concurrent_batches === 0 ? 'no batch API' : number(tier.concurrent_batches)}</td><td>${number(tier.max_requests_per_batch)}</td>
          <td class="permissions">${tier.permissions.join(', ')}</td></tr>`,
      )}</tbody>
    </table></div>
  </main>`;
}

export function FleetPage() {
  const load = useCallback(() => api('operator/fleet'), []);
  const [{ data, error }] = usePoll(load, 5000);
  return html`<main>
    <h1>Fleet</h1>
    <${ErrorNote} error=${error} />
    <h2>Instances alive</h2>
    <p class="muted">Each instance renews its row every 5 seconds; one not seen for 15 seconds is left out.</p>
    <div class="table-wrap"><table aria-label="Instances">
      <thead><tr><th>Instance</th><th>Version</th><th>Started</th><th>Last seen</th></tr></thead>
      <tbody>${(data?.instances ?? []).map(
        (instance) =>
          html`<tr key=${instance.id}><td><code>${instance.id}</code></td><td>${instance.version}</td><td>${dateTime(instance.started_at)}</td><td>${new Date(instance.last_seen_at).toISOString().slice(11, 19)} UTC</td></tr>`,
      )}</tbody>
    </table></div>
    <h2>Routed deployments</h2>
    ${data && !data.shared_routing_state ? html`<p class="muted">No Redis: the live figures are this instance's own.</p>` : null}
    <div class="table-wrap"><table aria-label="Deployments">
      <thead><tr><th>Model</th><th>Strategy</th><th>Deployment</th><th>Upstream model</th><th>Weight</th><th>Requests this minute</th><th>Tokens this minute</th><th>In flight</th><th>Health</th><th>Latency</th></tr></thead>
      <tbody>${(data?.deployments ?? []).map(
        (
          row,
        ) => html`<tr key=${`${row.model}-${row.deployment}`}><td>${row.model}</td><td>${row.strategy}</td><td>${row.deployment}</td><td>${row.upstream_model}</td><td>${row.weight}</td>
          <td>${row.live ? row.live.requests_this_minute : '—'}${row.requests_per_minute_limit ? ` / ${number(row.requests_per_minute_limit)}` : ''}</td>
          <td>${row.live ? number(row.live.tokens_this_minute) : '—'}${row.tokens_per_minute_limit ? ` / ${number(row.tokens_per_minute_limit)}` : ''}</td>
          <td>${row.live ? row.live.in_flight : '—'}</td>
          <td>${row.live === null ? 'direct' : row.live.cooling_until ? `cooling until ${row.live.cooling_until.slice(11, 19)}` : 'healthy'}</td>
          <td>${row.live?.latency_ms == null ? '—' : `${row.live.latency_ms} ms`}</td></tr>`,
      )}</tbody>
    </table></div>
  </main>`;
}

export function OperatorAuditPage() {
  const [before, setBefore] = useState(undefined);
  const load = useCallback(() => api(`operator/audit?limit=50${before ? `&before=${before}` : ''}`), [before]);
  const [{ data, error }] = usePoll(load, 0);
  const entries = data?.data ?? [];
  return html`<main>
    <h1>Operator audit log</h1>
    <p class="muted">What operators changed (console and CLI), kept apart from the organizations' own logs.</p>
    <${ErrorNote} error=${error} />
    <div class="table-wrap"><table aria-label="Operator audit log">
      <thead><tr><th>When</th><th>Who</th><th>Action</th><th>Organization</th><th>Target</th><th>Detail</th><th>From</th></tr></thead>
      <tbody>${entries.map(
        (
          entry,
        ) => html`<tr key=${entry.id}><td class="nowrap">${dateTime(entry.created_at)}</td><td>${entry.actor}</td><td>${entry.action}</td>
          <td>${entry.organization ?? '—'}</td><td>${entry.target ?? '—'}</td><td class="break">${entry.detail === null ? '—' : JSON.stringify(entry.detail)}</td><td>${entry.address ?? '—'}</td></tr>`,
      )}</tbody>
    </table></div>
    <div class="toolbar">
      ${before ? html`<button type="button" onClick=${() => setBefore(undefined)}>Newest</button>` : null}
      ${data?.has_more ? html`<button type="button" onClick=${() => setBefore(entries[entries.length - 1].id)}>Older</button>` : null}
    </div>
  </main>`;
}
