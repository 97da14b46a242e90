// The keys page: list, create (secret shown once), revoke, rotate.
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, day, dateTime, ErrorNote, usePoll } from './components.js';

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

function NewSecret({ created, onDone }) {
  return html`<section class="secret" aria-live="polite" aria-labelledby="secret-title">
    <h2 id="secret-title">Your new key ${created.name ? `“${created.name}”` : ''}</h2>
    <p>This is the only time the key is shown. Copy it now and keep it safe.</p>
    <p><code data-testid="new-key" class="key">${created.key}</code> <${CopyButton} text=${created.key} /></p>
    <button type="button" onClick=${onDone}>Done</button>
  </section>`;
}

function CreateKeyForm({ tiers, permissions, onCreated, readOnly }) {
  const [error, setError] = useState(undefined);
  const [tier, setTier] = useState(tiers[0]?.name ?? '');
  const tierPermissions = tiers.find((entry) => entry.name === tier)?.permissions ?? [];
  const submit = async (event) => {
    event.preventDefault();
    const element = event.currentTarget;
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
      setError(caught);
    }
  };
  if (readOnly) return html`<p>Members can see keys; an owner creates them.</p>`;
  return html`<form onSubmit=${submit} aria-label="Create a key" class="card">
    <h2>Create a key</h2>
    <label for="key-name">Name</label>
    <input id="key-name" name="name" required maxlength="100" placeholder="e.g. production backend" />
    <label for="key-tier">Tier</label>
    <select id="key-tier" name="tier" value=${tier} onChange=${(event) => setTier(event.currentTarget.value)}>
      ${tiers.map((entry) => html`<option value=${entry.name}>${entry.name}</option>`)}
    </select>
    <fieldset>
      <legend>Permissions</legend>
      <div class="checks">
        ${permissions.map(
          (name) =>
            html`<label key=${`${tier}-${name}`} class="check"><input type="checkbox" name=${`permission-${name}`} defaultChecked=${tierPermissions.includes(name)} /> ${name}</label>`,
        )}
      </div>
    </fieldset>
    <label for="key-expires">Expires after (days, empty for never)</label>
    <input id="key-expires" name="expires" type="number" min="1" max="3650" />
    <button type="submit">Create key</button>
    <${ErrorNote} error=${error} />
  </form>`;
}

export function KeysPage({ session }) {
  const load = useCallback(() => api('keys'), []);
  const [{ data, error }, refresh] = usePoll(load, 10_000);
  const [created, setCreated] = useState(undefined);
  const [actionError, setActionError] = useState(undefined);
  const readOnly = session.role !== 'owner';
  const act = async (path, body) => {
    try {
      const result = await api(path, { method: 'POST', body });
      setActionError(undefined);
      if (result.key) setCreated(result);
      refresh();
    } catch (caught) {
      setActionError(caught);
    }
  };
  const rotate = (key) => {
    const grace = window.prompt(`Rotate ${key.name ?? key.id}: how many minutes may the old key keep working?`, '60');
    if (grace === null) return;
    act(`keys/${key.id}/rotate`, { grace_seconds: Math.max(0, Math.round(Number(grace) * 60)) || 0 });
  };
  const revoke = (key) => {
    if (window.confirm(`Revoke ${key.name ?? key.id}? Requests with it fail at once.`)) act(`keys/${key.id}/revoke`);
  };
  return html`<main>
    <h1>API keys</h1>
    ${created ? html`<${NewSecret} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNote} error=${error ?? actionError} />
    ${
      data
        ? html`<${CreateKeyForm} tiers=${data.allowed_tiers} permissions=${data.permissions} onCreated=${(result) => {
            setCreated(result);
            refresh();
          }} readOnly=${readOnly} />
        <div class="table-wrap"><table aria-label="API keys">
          <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Tier</th><th scope="col">Permissions</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${data.data.length === 0 ? html`<tr><td colspan="9">No keys yet.</td></tr>` : null}
            ${data.data.map(
              (key) => html`<tr key=${key.id} data-key-id=${key.id}>
                <td>${key.name ?? '—'}</td><td><code>${key.prefix}</code></td><td>${key.tier}</td>
                <td class="permissions">${key.permissions.join(', ')}</td><td class="nowrap">${day(key.created_at)}</td><td class="nowrap">${day(key.last_used_day)}</td>
                <td>${key.expires_at ? dateTime(key.expires_at) : 'never'}</td><td><span class=${`status ${key.status}`}>${key.status}</span></td>
                <td class="actions">${
                  key.status === 'active' && !readOnly
                    ? html`<button type="button" onClick=${() => rotate(key)} aria-label=${`Rotate ${key.name ?? key.id}`}>Rotate</button>
                      <button type="button" class="danger" onClick=${() => revoke(key)} aria-label=${`Revoke ${key.name ?? key.id}`}>Revoke</button>`
                    : null
                }</td>
              </tr>`,
            )}
          </tbody>
        </table></div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}
