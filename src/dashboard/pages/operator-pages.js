// The operator area's organization pages: the list (search, plan, status, members, keys, usage today
// and this month, spend, last activity) and one organization (plan and overrides, suspend and
// reactivate, a set-password link for one of its people, its keys).
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, day, number, usd, ErrorNote, Link, usePoll } from './components.js';

const FIGURES = [
  ['requestsPerMinute', 'requests_per_minute', 'Requests per minute (per key)'],
  ['tokensPerMinute', 'tokens_per_minute', 'Tokens per minute (per key)'],
  ['tokensPerDay', 'tokens_per_day', 'Tokens per day'],
  ['tokensPerMonth', 'tokens_per_month', 'Tokens per month'],
  ['concurrentBatches', 'concurrent_batches', 'Concurrent batches'],
  ['maxRequestsPerBatch', 'max_requests_per_batch', 'Requests per batch'],
];

const limit = (value) => (value === 0 ? 'unlimited' : number(value));

export function OrganizationsPage() {
  const [search, setSearch] = useState(new URLSearchParams(location.search).get('search') ?? '');
  const load = useCallback(() => api(`operator/organizations${search ? `?search=${encodeURIComponent(search)}` : ''}`), [search]);
  const [{ data, error }] = usePoll(load, 0);
  const onSearch = (event) => {
    event.preventDefault();
    setSearch(new FormData(event.currentTarget).get('search').trim());
  };
  return html`<main>
    <h1>Organizations</h1>
    <form class="toolbar" role="search" onSubmit=${onSearch}>
      <label for="org-search">Search</label>
      <input id="org-search" name="search" type="search" value=${search} placeholder="organization id or an owner's email" />
      <button type="submit">Search</button>
    </form>
    <${ErrorNote} error=${error} />
    <div class="table-wrap"><table aria-label="Organizations">
      <thead><tr><th>Organization</th><th>Plan</th><th>Status</th><th>Members</th><th>Active keys</th><th>Tokens today</th><th>Tokens this month</th><th>Spend this month</th><th>Last active</th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (row) => html`<tr key=${row.id}>
          <td><${Link} href=${`/dashboard/operator/organizations/${encodeURIComponent(row.id)}`}>${row.id}<//></td>
          <td>${row.plan}${row.custom ? ' (custom)' : ''}</td>
          <td><span class=${`status ${row.status === 'active' ? 'active' : 'revoked'}`}>${row.status}</span></td>
          <td>${row.members}</td><td>${row.active_keys}</td>
          <td>${number(row.today.tokens)}</td><td>${number(row.month.tokens)}</td><td>${usd(row.month.cost_usd)}</td>
          <td class="nowrap">${day(row.last_active_day)}</td>
        </tr>`,
      )}</tbody>
    </table></div>
    ${data && data.data.length === 0 ? html`<p>No organization matches.</p>` : null}
  </main>`;
}

function PlanForm({ organization, tiers, onSaved }) {
  const [tier, setTier] = useState(organization.plan.tier);
  const [error, setError] = useState(undefined);
  const [saved, setSaved] = useState(undefined);
  const base = tiers.find((entry) => entry.name === tier);
  const overrides = organization.plan.tier === tier ? (organization.overrides ?? {}) : {};
  const permissions = overrides.permissions ?? base?.permissions ?? [];
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = {};
    for (const [field] of FIGURES) {
      const value = String(form.get(field) ?? '').trim();
      if (value !== '') chosen[field] = Number(value.replace(/[,_\s]/g, ''));
    }
    const picked = (base?.all_permissions ?? []).filter((name) => form.get(`permission-${name}`) === 'on');
    if (picked.join() !== (base?.permissions ?? []).join()) chosen.permissions = picked;
    try {
      const result = await api(`operator/organizations/${encodeURIComponent(organization.id)}/plan`, {
        method: 'POST',
        body: { plan: tier, overrides: Object.keys(chosen).length > 0 ? chosen : null },
      });
      setError(undefined);
      setSaved(result);
      onSaved();
    } catch (caught) {
      setError(caught);
    }
  };
  return html`<form class="card" aria-label="Change the plan" onSubmit=${submit}>
    <h2>Plan</h2>
    <label for="plan-tier">Plan</label>
    <select id="plan-tier" value=${tier} onChange=${(event) => setTier(event.currentTarget.value)}>
      ${tiers.map((entry) => html`<option value=${entry.name}>${entry.name}</option>`)}
    </select>
    <p class="muted">Leave a figure empty to take the plan's; 0 means unlimited (requests and tokens).</p>
    ${FIGURES.map(
      ([field, wire, label]) => html`<label for=${`override-${field}`}>${label}</label>
        <input id=${`override-${field}`} name=${field} inputmode="numeric" value=${overrides[field] ?? ''} placeholder=${base ? `${limit(base[wire])} (plan)` : ''} />`,
    )}
    <fieldset><legend>Permissions allowed</legend>${(base?.all_permissions ?? []).map(
      (name) =>
        html`<label class="check"><input type="checkbox" name=${`permission-${name}`} checked=${permissions.includes(name)} key=${`${tier}-${name}`} />${name}</label>`,
    )}</fieldset>
    <${ErrorNote} error=${error} />
    ${saved ? html`<p role="status">Saved: ${saved.plan.tier}${saved.plan.custom ? ' (custom)' : ''}; ${saved.narrowed_keys} key(s) narrowed.</p>` : null}
    <button type="submit">Save plan</button>
  </form>`;
}

function StatusCard({ organization, onChanged }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState(undefined);
  const suspended = organization.status === 'suspended';
  const act = async () => {
    try {
      await api(`operator/organizations/${encodeURIComponent(organization.id)}/${suspended ? 'resume' : 'suspend'}`, { method: 'POST' });
      setConfirming(false);
      setError(undefined);
      onChanged();
    } catch (caught) {
      setError(caught);
    }
  };
  return html`<section class="card" aria-labelledby="status-title">
    <h2 id="status-title">Status: <span class=${`status ${suspended ? 'revoked' : 'active'}`}>${organization.status}</span></h2>
    <p class="muted">A suspended organization's keys answer 403 and its batches pause until it is reactivated; its owners see a banner.</p>
    <${ErrorNote} error=${error} />
    ${
      confirming
        ? html`<div role="alertdialog" aria-labelledby="confirm-title" class="notice"><p id="confirm-title">${suspended ? 'Reactivate' : 'Suspend'} ${organization.id}?</p>
            <button type="button" class=${suspended ? '' : 'danger'} onClick=${act}>Yes, ${suspended ? 'reactivate' : 'suspend'}</button><button type="button" class="secondary" onClick=${() => setConfirming(false)}>Cancel</button></div>`
        : html`<button type="button" class=${suspended ? '' : 'danger'} onClick=${() => setConfirming(true)}>${suspended ? 'Reactivate' : 'Suspend'}</button>`
    }
  </section>`;
}

function PeopleCard({ organization }) {
  const [issued, setIssued] = useState(undefined);
  const [error, setError] = useState(undefined);
  const link = async (person) => {
    try {
      setIssued(
        await api(`operator/organizations/${encodeURIComponent(organization.id)}/people/${person.id}/reset-link`, { method: 'POST' }),
      );
      setError(undefined);
    } catch (caught) {
      setError(caught);
    }
  };
  return html`<section class="card" aria-labelledby="people-title">
    <h2 id="people-title">People</h2>
    <${ErrorNote} error=${error} />
    ${issued ? html`<p role="status">${issued.delivery === 'sent' ? `Link mailed to ${issued.email}.` : html`No SMTP configured: pass this link to ${issued.email}: <code class="key break">${issued.link}</code>`}</p>` : null}
    <div class="table-wrap"><table aria-label="People">
      <thead><tr><th>Email</th><th>Role</th><th>Password</th><th>Two-factor</th><th>Last seen</th><th></th></tr></thead>
      <tbody>${organization.people.map(
        (
          person,
        ) => html`<tr key=${person.id}><td>${person.email}</td><td>${person.role}</td><td>${person.password_set ? 'set' : 'not yet'}</td>
          <td>${person.totp_enabled ? 'on' : 'off'}</td><td class="nowrap">${day(person.last_seen_at)}</td>
          <td class="actions"><button type="button" onClick=${() => link(person)}>Send set-password link</button></td></tr>`,
      )}</tbody>
    </table></div>
  </section>`;
}

export function OrganizationPage({ id }) {
  const load = useCallback(() => Promise.all([api(`operator/organizations/${encodeURIComponent(id)}`), api('operator/plans')]), [id]);
  const [{ data, error }, refresh] = usePoll(load, 0);
  if (!data) return html`<main><${ErrorNote} error=${error} /><p>${error ? '' : 'Loading…'}</p></main>`;
  const [organization, plans] = data;
  const permissionsList = plans.data.reduce((all, tier) => [...new Set([...all, ...tier.permissions])], []);
  const tiers = plans.data.map((tier) => ({ ...tier, all_permissions: permissionsList }));
  const plan = organization.plan;
  return html`<main>
    <p><${Link} href="/dashboard/operator/organizations">← Organizations<//></p>
    <h1>${organization.id}</h1>
    <${ErrorNote} error=${error} />
    <section class="card" aria-labelledby="limits-title">
      <h2 id="limits-title">Limits now: ${plan.tier}${plan.custom ? ' (custom)' : ''}</h2>
      <dl class="facts" data-testid="org-limits">
        ${FIGURES.map(([, wire, label]) => html`<dt>${label}</dt><dd>${limit(plan[wire])}</dd>`)}
        <dt>Permissions</dt><dd>${plan.permissions.join(', ') || 'none'}</dd>
        <dt>Key tiers allowed</dt><dd>${organization.allowed_key_tiers.join(', ')}</dd>
      </dl>
    </section>
    <${PlanForm} organization=${organization} tiers=${tiers} onSaved=${refresh} key=${`${plan.tier}-${JSON.stringify(organization.overrides)}`} />
    <${StatusCard} organization=${organization} onChanged=${refresh} />
    <${PeopleCard} organization=${organization} />
    <section class="card" aria-labelledby="org-keys-title">
      <h2 id="org-keys-title">Keys</h2>
      <div class="table-wrap"><table aria-label="Keys of the organization">
        <thead><tr><th>Name</th><th>Prefix</th><th>Tier</th><th>Permissions</th><th>Status</th></tr></thead>
        <tbody>${organization.keys.map(
          (key) => html`<tr key=${key.id}><td>${key.name ?? '—'}</td><td><code>${key.prefix}</code></td><td>${key.tier}</td>
            <td class="permissions">${key.permissions.join(', ')}</td><td><span class=${`status ${key.status}`}>${key.status}</span></td></tr>`,
        )}</tbody>
      </table></div>
    </section>
  </main>`;
}
