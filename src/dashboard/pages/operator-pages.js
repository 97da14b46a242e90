// @ts-check
// The operator area's organization pages: the list (search, plan, status, members, keys, usage today
// and this month, spend, last activity) and one organization (plan and overrides, suspend and
// reactivate, a set-password link for one of its people, its keys).
import { useState } from 'preact/hooks';
import { html, day, number, usd, DataTable, ErrorNote, Link, useAction, usePoll } from './components.js';
import { LimitsSummary } from './limits-summary.js';

/** @typedef {Record<string, any>} Json */

/** [overrides field, wire field, label] of every plan figure. */
const FIGURES = [
  ['requestsPerMinute', 'requests_per_minute', 'Requests per minute (per key)'],
  ['tokensPerMinute', 'tokens_per_minute', 'Tokens per minute (per key)'],
  ['tokensPerDay', 'tokens_per_day', 'Tokens per day'],
  ['tokensPerMonth', 'tokens_per_month', 'Tokens per month'],
  ['concurrentBatches', 'concurrent_batches', 'Concurrent batches'],
  ['maxRequestsPerBatch', 'max_requests_per_batch', 'Requests per batch'],
  ['maxActiveKeys', 'max_active_keys', 'Active API keys'],
  ['storageQuotaBytes', 'storage_quota_bytes', 'Storage quota (bytes)'],
];

/** @param {number} value */
const limit = (value) => (value === 0 ? 'unlimited' : number(value));
/** @param {string} id */
const organizationPath = (id) => `operator/organizations/${encodeURIComponent(id)}`;

/** @type {import('./components.js').Column<Json>[]} */
const ORGANIZATION_COLUMNS = [
  {
    label: 'Organization',
    cell: (row) => html`<${Link} href=${`/dashboard/operator/organizations/${encodeURIComponent(row.id)}`}>${row.id}<//>`,
  },
  { label: 'Plan', cell: (row) => `${row.plan}${row.custom ? ' (custom)' : ''}` },
  {
    label: 'Status',
    cell: (row) => html`<span class=${`status ${row.status === 'active' ? 'active' : 'revoked'}`}>${row.status}</span>`,
  },
  { label: 'Members', cell: (row) => row.members },
  {
    label: 'Active keys',
    cell: (row) => (row.max_active_keys > 0 ? `${row.active_keys} of ${number(row.max_active_keys)}` : row.active_keys),
  },
  { label: 'Tokens today', cell: (row) => number(row.today.tokens) },
  { label: 'Tokens this month', cell: (row) => number(row.month.tokens) },
  { label: 'Spend this month', cell: (row) => usd(row.month.cost_usd) },
  { label: 'Last active', className: 'nowrap', cell: (row) => day(row.last_active_day) },
];

export function OrganizationsPage() {
  const [search, setSearch] = useState(new URLSearchParams(location.search).get('search') ?? '');
  /** @type {[import('./components.js').Polled<Json>, () => void]} */
  const [{ data, error }] = usePoll(`operator/organizations${search ? `?search=${encodeURIComponent(search)}` : ''}`, 0);
  /** @param {SubmitEvent} event */
  const onSearch = (event) => {
    event.preventDefault();
    setSearch(String(new FormData(/** @type {HTMLFormElement} */ (event.currentTarget)).get('search') ?? '').trim());
  };
  return html`<main>
    <h1>Organizations</h1>
    <form class="toolbar" role="search" onSubmit=${onSearch}>
      <label for="org-search">Search</label>
      <!-- Uncontrolled: a list answer arriving while someone types must not reset the field. -->
      <input id="org-search" name="search" type="search" defaultValue=${search} placeholder="organization id or an owner's email" />
      <button type="submit">Search</button>
    </form>
    <${ErrorNote} error=${error} />
    <${DataTable}
      label="Organizations"
      columns=${ORGANIZATION_COLUMNS}
      rows=${data?.data ?? []}
      rowKey=${(/** @type {Json} */ row) => row.id}
      empty=${data ? 'No organization matches.' : 'Loading…'}
    />
  </main>`;
}

/** The overrides the form asks for: the figures filled in, and the permissions when they differ from the plan's. */
/** @param {FormData} form @param {Json | undefined} base */
function chosenOverrides(form, base) {
  /** @type {Json} */
  const chosen = {};
  for (const [field] of FIGURES) {
    const value = String(form.get(field ?? '') ?? '').trim();
    if (value !== '' && field) chosen[field] = Number(value.replace(/[,_\s]/g, ''));
  }
  const picked = (base?.all_permissions ?? []).filter((/** @type {string} */ name) => form.get(`permission-${name}`) === 'on');
  // Compared as sets: the checkboxes follow the union of every tier's list, not this tier's order.
  const planPermissions = new Set(base?.permissions ?? []);
  const unchanged = picked.length === planPermissions.size && picked.every((/** @type {string} */ name) => planPermissions.has(name));
  if (!unchanged) chosen.permissions = picked;
  return Object.keys(chosen).length > 0 ? chosen : null;
}

/** @param {{ organization: Json, tiers: Json[], onSaved: () => void }} props */
function PlanForm({ organization, tiers, onSaved }) {
  const [tier, setTier] = useState(organization.plan.tier);
  const [saved, setSaved] = useState(/** @type {Json | undefined} */ (undefined));
  const action = useAction(onSaved);
  const base = tiers.find((entry) => entry.name === tier);
  const overrides = organization.plan.tier === tier ? (organization.overrides ?? {}) : {};
  const permissions = overrides.permissions ?? base?.permissions ?? [];
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    const body = { plan: tier, overrides: chosenOverrides(form, base) };
    const result = await action.run(`${organizationPath(organization.id)}/plan`, { body });
    if (result) setSaved(result);
  };
  return html`<form class="card" aria-label="Change the plan" onSubmit=${submit}>
    <h2>Plan</h2>
    <label for="plan-tier">Plan</label>
    <select
      id="plan-tier"
      value=${tier}
      onChange=${(/** @type {Event} */ event) => setTier(/** @type {HTMLSelectElement} */ (event.currentTarget).value)}
    >
      ${tiers.map((entry) => html`<option value=${entry.name}>${entry.name}</option>`)}
    </select>
    <p class="muted">Leave a figure empty to take the plan's; 0 means unlimited (requests, tokens, keys and storage).</p>
    ${FIGURES.map(
      ([field, wire, label]) => html`<label for=${`override-${field}`}>${label}</label>
        <input
          id=${`override-${field}`}
          name=${field}
          inputmode="numeric"
          value=${overrides[field ?? ''] ?? ''}
          placeholder=${base ? `${limit(base[wire ?? ''])} (plan)` : ''}
        />`,
    )}
    <fieldset>
      <legend>Permissions allowed</legend>
      ${(base?.all_permissions ?? []).map(
        (/** @type {string} */ name) => html`<label class="check">
          <input type="checkbox" name=${`permission-${name}`} checked=${permissions.includes(name)} key=${`${tier}-${name}`} />
          ${name}
        </label>`,
      )}
    </fieldset>
    <${ErrorNote} error=${action.error} />
    ${
      saved
        ? html`<p role="status">
          Saved: ${saved.plan.tier}${saved.plan.custom ? ' (custom)' : ''}; ${saved.narrowed_keys} key(s) narrowed.
        </p>`
        : null
    }
    <button type="submit">Save plan</button>
  </form>`;
}

/** @param {{ organization: Json, onChanged: () => void }} props */
function StatusCard({ organization, onChanged }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction(onChanged);
  const suspended = organization.status === 'suspended';
  const verb = suspended ? 'Reactivate' : 'Suspend';
  const act = async () => {
    if (await action.run(`${organizationPath(organization.id)}/${suspended ? 'resume' : 'suspend'}`)) setConfirming(false);
  };
  return html`<section class="card" aria-labelledby="status-title">
    <h2 id="status-title">
      Status:${' '}
      <span class=${`status ${suspended ? 'revoked' : 'active'}`}>${organization.status}</span>
    </h2>
    <p class="muted">
      A suspended organization's keys answer 403 and its batches pause until it is reactivated; its owners see a banner.
    </p>
    <${ErrorNote} error=${action.error} />
    ${
      confirming
        ? html`<div role="alertdialog" aria-labelledby="confirm-title" class="notice">
          <p id="confirm-title">${verb} ${organization.id}?</p>
          <button type="button" class=${suspended ? '' : 'danger'} onClick=${act}>Yes, ${verb.toLowerCase()}</button>
          <button type="button" class="secondary" onClick=${() => setConfirming(false)}>Cancel</button>
        </div>`
        : html`<button type="button" class=${suspended ? '' : 'danger'} onClick=${() => setConfirming(true)}>${verb}</button>`
    }
  </section>`;
}

/** @param {{ organization: Json }} props */
function PeopleCard({ organization }) {
  const [issued, setIssued] = useState(/** @type {Json | undefined} */ (undefined));
  const [confirming, setConfirming] = useState(/** @type {Json | undefined} */ (undefined));
  const action = useAction(undefined);
  /** Minting someone's link needs the operator's own password (or a current code). @param {SubmitEvent} event */
  const link = async (event) => {
    event.preventDefault();
    if (confirming === undefined) return;
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    const proof = String(form.get('proof') ?? '');
    const body = /^\d{6}$/.test(proof) ? { code: proof } : { password: proof };
    const answer = await action.run(`${organizationPath(organization.id)}/people/${confirming.id}/reset-link`, { body });
    if (answer) {
      setIssued(answer);
      setConfirming(undefined);
    }
  };
  const [ended, setEnded] = useState(/** @type {string | undefined} */ (undefined));
  /** Ends every session of the person at once (e.g. just removed from the identity provider's group). @param {Json} person */
  const endSessions = async (person) => {
    const result = await action.run(`operator/people/${person.id}/sessions/revoke`);
    if (result) setEnded(`Ended ${result.count} session${result.count === 1 ? '' : 's'} of ${person.email}.`);
  };
  /** @type {import('./components.js').Column<Json>[]} */
  const columns = [
    { label: 'Email', cell: (person) => person.email },
    { label: 'Role', cell: (person) => person.role },
    { label: 'Password', cell: (person) => (person.password_set ? 'set' : person.invitation ? 'invited' : 'not yet') },
    { label: 'Two-factor', cell: (person) => (person.totp_enabled ? 'on' : 'off') },
    { label: 'Last seen', className: 'nowrap', cell: (person) => day(person.last_seen_at) },
    {
      label: 'Actions',
      hideLabel: true,
      className: 'actions',
      // A pending invitation has no account yet: its organization's owners send it again or revoke it.
      cell: (person) =>
        person.invitation
          ? html`<span class="muted">invitation pending</span>`
          : html`<button type="button" onClick=${() => setConfirming(person)}>Send set-password link</button>
              <button type="button" class="secondary" onClick=${() => endSessions(person)}>End sessions</button>`,
    },
  ];
  return html`<section class="card" aria-labelledby="people-title">
    <h2 id="people-title">People</h2>
    ${
      confirming
        ? html`<form class="notice" onSubmit=${link} aria-label="Confirm it is you">
          <p>A set-password link for ${confirming.email}: confirm it is you first.</p>
          <label for="reset-proof">Your password (or a current authenticator code)</label>
          <input id="reset-proof" name="proof" type="password" autocomplete="current-password" required />
          <button type="submit">Send the link</button>
          <button type="button" class="secondary" onClick=${() => setConfirming(undefined)}>Cancel</button>
        </form>`
        : null
    }
    <${ErrorNote} error=${action.error} />
    ${ended ? html`<p role="status">${ended}</p>` : null}
    ${
      issued
        ? html`<p role="status">
          ${
            issued.delivery === 'sent'
              ? `Link mailed to ${issued.email}.`
              : html`No SMTP configured: pass this link to ${issued.email}:${' '}
                <code class="key break">${issued.link}</code>`
          }
        </p>`
        : null
    }
    <${DataTable} label="People" columns=${columns} rows=${organization.people} rowKey=${(/** @type {Json} */ person) => person.id} />
  </section>`;
}

/** @type {import('./components.js').Column<Json>[]} */
const KEY_COLUMNS = [
  { label: 'Name', cell: (key) => key.name ?? '—' },
  { label: 'Prefix', cell: (key) => html`<code>${key.prefix}</code>` },
  { label: 'Tier', cell: (key) => key.tier },
  { label: 'Permissions', className: 'permissions', cell: (key) => key.permissions.join(', ') },
  { label: 'Status', cell: (key) => html`<span class=${`status ${key.status}`}>${key.status}</span>` },
];

/** @param {{ organization: Json }} props */
function LimitsCard({ organization }) {
  const plan = organization.plan;
  return html`<section class="card" aria-labelledby="limits-title">
    <h2 id="limits-title">Limits now: ${plan.tier}${plan.custom ? ' (custom)' : ''}</h2>
    <dl class="facts" data-testid="org-limits">
      ${FIGURES.map(
        ([, wire, label]) => html`<dt>${label}</dt>
          <dd>${limit(plan[wire ?? ''])}</dd>`,
      )}
      <dt>Permissions</dt>
      <dd>${plan.permissions.join(', ') || 'none'}</dd>
      <dt>Key tiers allowed</dt>
      <dd>${organization.allowed_key_tiers.join(', ')}</dd>
    </dl>
  </section>`;
}

/** @param {import('./types.js').PageProps} props */
export function OrganizationPage({ id = '' }) {
  /** @type {[import('./components.js').Polled<[Json, Json]>, () => void]} */
  const [{ data, error }, refresh] = usePoll([organizationPath(id), 'operator/plans'], 0);
  if (!data)
    return html`<main>
      <${ErrorNote} error=${error} />
      <p>${error ? '' : 'Loading…'}</p>
    </main>`;
  const [organization, plans] = data;
  /** @type {string[]} */
  const permissionsList = plans.data.reduce(
    (/** @type {string[]} */ all, /** @type {Json} */ tier) => [...new Set([...all, ...tier.permissions])],
    [],
  );
  const tiers = plans.data.map((/** @type {Json} */ tier) => ({ ...tier, all_permissions: permissionsList }));
  return html`<main>
    <p><${Link} href="/dashboard/operator/organizations">← Organizations<//></p>
    <h1>${organization.id}</h1>
    <${ErrorNote} error=${error} />
    <${LimitsCard} organization=${organization} />
    <section class="card" aria-labelledby="org-usage-title">
      <h2 id="org-usage-title">Keys and storage used</h2>
      <${LimitsSummary} path=${`${organizationPath(organization.id)}/limits`} changed=${organization} />
    </section>
    <${PlanForm}
      organization=${organization}
      tiers=${tiers}
      onSaved=${refresh}
      key=${`${organization.plan.tier}-${JSON.stringify(organization.overrides)}`}
    />
    <${StatusCard} organization=${organization} onChanged=${refresh} />
    <${PeopleCard} organization=${organization} />
    <section class="card" aria-labelledby="org-keys-title">
      <h2 id="org-keys-title">Keys</h2>
      <${DataTable}
        label="Keys of the organization"
        columns=${KEY_COLUMNS}
        rows=${organization.keys}
        rowKey=${(/** @type {Json} */ key) => key.id}
        empty="No keys."
      />
    </section>
  </main>`;
}
