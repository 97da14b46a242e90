// @ts-check
// The keys page: list, create (secret shown once), revoke, rotate.
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { html, day, dateTime, DataTable, ErrorNote, useAction, usePoll } from './components.js';

/** @typedef {import('./types.js').KeyObject} KeyObject */
/** @typedef {import('./types.js').CreatedKeyObject} CreatedKeyObject */
/** @typedef {import('./types.js').KeysList} KeysList */

/** @param {{ text: string }} props */
function CopyButton({ text }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return html`<button type="button" onClick=${copy} aria-label="Copy the key">${copied ? 'Copied' : 'Copy'}</button>`;
}

/** @param {{ created: CreatedKeyObject, onDone: () => void }} props */
function NewSecret({ created, onDone }) {
  return html`<section class="secret" aria-live="polite" aria-labelledby="secret-title">
    <h2 id="secret-title">Your new key ${created.name ? `“${created.name}”` : ''}</h2>
    <p>This is the only time the key is shown. Copy it now and keep it safe.</p>
    <p>
      <code data-testid="new-key" class="key">${created.key}</code>
      <${CopyButton} text=${created.key} />
    </p>
    <button type="button" onClick=${onDone}>Done</button>
  </section>`;
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

/**
 * @param {{ readOnly: boolean, rotate: (key: KeyObject) => void, revoke: (key: KeyObject) => void }} actions
 * @returns {import('./components.js').Column<KeyObject>[]}
 */
function keyColumns({ readOnly, rotate, revoke }) {
  return [
    { label: 'Name', cell: (key) => key.name ?? '—' },
    { label: 'Key', cell: (key) => html`<code>${key.prefix}</code>` },
    { label: 'Tier', cell: (key) => key.tier },
    { label: 'Permissions', className: 'permissions', cell: (key) => key.permissions.join(', ') },
    { label: 'Created', className: 'nowrap', cell: (key) => day(key.created_at) },
    { label: 'Last used', className: 'nowrap', cell: (key) => day(key.last_used_day) },
    { label: 'Expires', cell: (key) => (key.expires_at ? dateTime(key.expires_at) : 'never') },
    { label: 'Status', cell: (key) => html`<span class=${`status ${key.status}`}>${key.status}</span>` },
    {
      label: 'Actions',
      hideLabel: true,
      className: 'actions',
      cell: (key) =>
        key.status === 'active' && !readOnly
          ? html`<button type="button" onClick=${() => rotate(key)} aria-label=${`Rotate ${key.name ?? key.id}`}>Rotate</button>
              <button type="button" class="danger" onClick=${() => revoke(key)} aria-label=${`Revoke ${key.name ?? key.id}`}>
                Revoke
              </button>`
          : null,
    },
  ];
}

/** @param {import('./types.js').PageProps} props */
export function KeysPage({ session }) {
  /** @type {[import('./components.js').Polled<KeysList>, () => void]} */
  const [{ data, error }, refresh] = usePoll('keys', 10_000);
  const [created, setCreated] = useState(/** @type {CreatedKeyObject | undefined} */ (undefined));
  const action = useAction(refresh);
  const readOnly = session.role !== 'owner';
  /** @param {string} path @param {unknown} [body] */
  const act = async (path, body) => {
    const result = await action.run(path, { body });
    if (result?.key) setCreated(result);
  };
  /** @param {KeyObject} key */
  const rotate = (key) => {
    const grace = window.prompt(`Rotate ${key.name ?? key.id}: how many minutes may the old key keep working?`, '60');
    if (grace === null) return;
    act(`keys/${key.id}/rotate`, { grace_seconds: Math.max(0, Math.round(Number(grace) * 60)) || 0 });
  };
  /** @param {KeyObject} key */
  const revoke = (key) => {
    if (window.confirm(`Revoke ${key.name ?? key.id}? Requests with it fail at once.`)) act(`keys/${key.id}/revoke`);
  };
  /** @param {CreatedKeyObject} result */
  const onCreated = (result) => {
    setCreated(result);
    refresh();
  };
  return html`<main>
    <h1>API keys</h1>
    ${created ? html`<${NewSecret} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNote} error=${error ?? action.error} />
    ${
      data === undefined
        ? null
        : readOnly
          ? html`<p>Members can see keys; an owner creates them.</p>`
          : html`<${CreateKeyForm} tiers=${data.allowed_tiers} permissions=${data.permissions} onCreated=${onCreated} />`
    }
    <${DataTable}
      label="API keys"
      columns=${keyColumns({ readOnly, rotate, revoke })}
      rows=${data?.data}
      rowKey=${(/** @type {KeyObject} */ key) => key.id}
      rowProps=${(/** @type {KeyObject} */ key) => ({ 'data-key-id': key.id })}
      empty="No keys yet."
    />
  </main>`;
}
