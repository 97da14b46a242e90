// @ts-check
// The keys page: list (paged, searchable), create (secret shown once), rename and permissions, revoke,
// rotate (the old key marked "replaced" while it keeps working), each change confirmed in a dialog.
import { LimitsSummary } from './limits-summary.js';
import { useState } from 'preact/hooks';
import { api } from './api.js';
import {
  html,
  day,
  dateTime,
  DataTable,
  ErrorNote,
  LoadMore,
  SearchForm,
  ShownOnce,
  useAction,
  useConfirm,
  usePaged,
} from './components.js';

/** @typedef {import('./types.js').KeyObject} KeyObject */
/** @typedef {import('./types.js').CreatedKeyObject} CreatedKeyObject */
/** @typedef {import('./types.js').KeysList} KeysList */

/** @param {{ created: CreatedKeyObject, onDone: () => void }} props */
function NewSecret({ created, onDone }) {
  return html`<${ShownOnce}
    title=${`Your new key ${created.name ? `“${created.name}”` : ''}`}
    note="This is the only time the key is shown. Copy it now and keep it safe."
    secret=${created.key}
    testId="new-key"
    copyLabel="Copy the key"
    onDone=${onDone}
  />`;
}

/** @param {{ tiers: KeysList['allowed_tiers'], permissions: string[], onCreated: (created: CreatedKeyObject) => void }} props */
function CreateKeyForm({ tiers, permissions, onCreated }) {
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  const [tier, setTier] = useState(tiers[0]?.name ?? '');
  const tierPermissions = tiers.find((entry) => entry.name === tier)?.permissions ?? [];
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const element = /** @type {HTMLFormElement} */ (event.currentTarget);
    const form = new FormData(element);
    const chosen = permissions.filter((name) => form.get(`permission-${name}`) === 'on');
    const days = form.get('expires');
    try {
      const created = await api('keys', {
        method: 'POST',
        body: { name: form.get('name'), tier, permissions: chosen, expires_in_days: days ? Number(days) : null },
      });
      element.reset();
      setError(undefined);
      onCreated(created);
    } catch (caught) {
      setError(/** @type {Error} */ (caught));
    }
  };
  return html`<form onSubmit=${submit} aria-label="Create a key" class="card">
    <h2>Create a key</h2>
    <label for="key-name">Name</label>
    <input id="key-name" name="name" required maxlength="100" placeholder="e.g. production backend" />
    <label for="key-tier">Tier</label>
    <select
      id="key-tier"
      name="tier"
      value=${tier}
      onChange=${(/** @type {Event} */ event) => setTier(/** @type {HTMLSelectElement} */ (event.currentTarget).value)}
    >
      ${tiers.map((entry) => html`<option value=${entry.name}>${entry.name}</option>`)}
    </select>
    <fieldset>
      <legend>Permissions</legend>
      <div class="checks">
        ${permissions.map(
          (name) => html`<label key=${`${tier}-${name}`} class="check">
            <input type="checkbox" name=${`permission-${name}`} defaultChecked=${tierPermissions.includes(name)} />
            ${' '}${name}
          </label>`,
        )}
      </div>
    </fieldset>
    <label for="key-expires">Expires after (days, empty for never)</label>
    <input id="key-expires" name="expires" type="number" min="1" max="3650" />
    <button type="submit">Create key</button>
    <${ErrorNote} error=${error} />
  </form>`;
}

/** "replaced, expires in N min" for a rotated key still in its grace period. @param {KeyObject} key */
function status(key) {
  if (key.status === 'active' && key.replaced_by && key.expires_at !== null) {
    const minutes = Math.max(1, Math.ceil((key.expires_at - Date.now()) / 60_000));
    return html`<span class="status replaced">replaced, expires in ${minutes} min</span>`;
  }
  return html`<span class=${`status ${key.status}`}>${key.status}</span>`;
}

/**
 * @param {{ readOnly: boolean, edit: (key: KeyObject) => void, rotate: (key: KeyObject) => void, revoke: (key: KeyObject) => void }} actions
 * @returns {import('./components.js').Column<KeyObject>[]}
 */
function keyColumns({ readOnly, edit, rotate, revoke }) {
  /** @param {KeyObject} key */
  const name = (key) => key.name ?? key.id;
  return [
    { label: 'Name', cell: (key) => key.name ?? '—' },
    { label: 'Key', className: 'nowrap', cell: (key) => html`<code>${key.prefix}</code>` },
    { label: 'Tier', cell: (key) => key.tier },
    { label: 'Permissions', className: 'permissions', cell: (key) => key.permissions.join(', ') },
    { label: 'Created', className: 'nowrap', cell: (key) => day(key.created_at) },
    { label: 'Last used', className: 'nowrap', cell: (key) => day(key.last_used_day) },
    { label: 'Expires', cell: (key) => (key.expires_at ? dateTime(key.expires_at) : 'never') },
    { label: 'Status', cell: status },
    {
      label: 'Actions',
      hideLabel: true,
      className: 'actions',
      cell: (key) =>
        key.status === 'active' && !readOnly
          ? html`<button type="button" class="secondary" onClick=${() => edit(key)} aria-label=${`Edit ${name(key)}`}>Edit</button>
              ${
                key.replaced_by
                  ? null
                  : html`<button type="button" onClick=${() => rotate(key)} aria-label=${`Rotate ${name(key)}`}>Rotate</button>`
              }
              <button type="button" class="danger" onClick=${() => revoke(key)} aria-label=${`Revoke ${name(key)}`}>Revoke</button>`
          : null,
    },
  ];
}

/** The permission checkboxes of the edit dialog: those the plan allows, the key's ticked. @param {{ keyObject: KeyObject, allowed: string[] }} props */
function PermissionChecks({ keyObject, allowed }) {
  return html`<fieldset>
    <legend>Permissions</legend>
    <div class="checks">
      ${allowed.map(
        (name) => html`<label class="check">
          <input type="checkbox" name=${`permission-${name}`} defaultChecked=${keyObject.permissions.includes(name)} />
          ${' '}${name}
        </label>`,
      )}
    </div>
  </fieldset>`;
}

/** @param {import('./types.js').PageProps} props */
export function KeysPage({ session }) {
  const [search, setSearch] = useState('');
  /** @type {import('./components.js').Paged<KeyObject> & { first: KeysList | undefined }} */
  const paged = usePaged('keys', search, 10_000);
  const data = paged.first;
  const [created, setCreated] = useState(/** @type {CreatedKeyObject | undefined} */ (undefined));
  const action = useAction(paged.refresh);
  const [dialog, ask] = useConfirm();
  const readOnly = session.role !== 'owner';
  /** @param {string} path @param {unknown} [body] */
  const act = async (path, body) => {
    const result = await action.run(path, { body });
    if (result?.key) setCreated(result);
  };
  /** @param {KeyObject} key */
  const rotate = async (key) => {
    const answer = await ask({
      title: `Rotate ${key.name ?? key.id}`,
      message: 'A new key replaces this one. The old key keeps working for the grace period, then stops.',
      confirm: 'Rotate',
      field: { label: 'Grace period (minutes)', type: 'number', value: '60', min: '0', max: String(30 * 24 * 60) },
    });
    if (answer) act(`keys/${key.id}/rotate`, { grace_seconds: Math.max(0, Math.round(Number(answer.get('value')) * 60)) || 0 });
  };
  /** @param {KeyObject} key */
  const revoke = async (key) => {
    const answer = await ask({
      title: `Revoke ${key.name ?? key.id}?`,
      message: 'Requests with it fail at once. This cannot be undone.',
      confirm: 'Revoke',
      danger: true,
    });
    if (answer) act(`keys/${key.id}/revoke`);
  };
  /** @param {KeyObject} key */
  const edit = async (key) => {
    const allowed = data?.plan_permissions ?? key.permissions;
    const answer = await ask({
      title: `Edit ${key.name ?? key.id}`,
      message: "Rename the key or change what it may do (within your organization's plan).",
      confirm: 'Save',
      field: { label: 'Name', value: key.name ?? '' },
      body: html`<${PermissionChecks} keyObject=${key} allowed=${allowed} />`,
    });
    if (!answer) return;
    const permissions = allowed.filter((name) => answer.get(`permission-${name}`) === 'on');
    act(`keys/${key.id}`, { name: String(answer.get('value') ?? '').trim(), permissions });
  };
  /** @param {CreatedKeyObject} result */
  const onCreated = (result) => {
    setCreated(result);
    paged.refresh();
  };
  return html`<main>
    <h1>API keys</h1>
    <${LimitsSummary} show=${['keys']} changed=${paged.rows} />
    ${created ? html`<${NewSecret} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNote} error=${paged.error ?? action.error} />
    ${
      data === undefined
        ? null
        : readOnly
          ? html`<p>Members can see keys; an owner creates them.</p>`
          : html`<${CreateKeyForm} tiers=${data.allowed_tiers} permissions=${data.permissions} onCreated=${onCreated} />`
    }
    <${SearchForm} label="Search keys" placeholder="name, prefix or id" onSearch=${setSearch} />
    <${DataTable}
      label="API keys"
      columns=${keyColumns({ readOnly, edit, rotate, revoke })}
      rows=${paged.rows}
      rowKey=${(/** @type {KeyObject} */ key) => key.id}
      rowProps=${(/** @type {KeyObject} */ key) => ({ 'data-key-id': key.id })}
      empty=${search ? 'No key matches.' : 'No keys yet.'}
    />
    <${LoadMore} paged=${paged} label="keys" />
    ${dialog}
  </main>`;
}
