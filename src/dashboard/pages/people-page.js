// The people page: the organization's owners and read-only members, invitations by email, role
// changes and removal (owners only); and the password form every person uses on the account page.
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, day, ErrorNote, usePoll } from './components.js';

function InviteForm({ onInvited }) {
  const [error, setError] = useState(undefined);
  const [result, setResult] = useState(undefined);
  const submit = async (event) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    try {
      const invited = await api('people/invite', { method: 'POST', body: { email: form.get('email'), role: form.get('role') } });
      element.reset();
      setError(undefined);
      setResult(invited);
      onInvited();
    } catch (caught) {
      setError(caught);
    }
  };
  return html`<form class="card" aria-label="Invite someone" onSubmit=${submit}>
    <h2>Invite someone</h2>
    <label for="invite-email">Email</label>
    <input id="invite-email" name="email" type="email" required maxlength="254" />
    <label for="invite-role">Role</label>
    <select id="invite-role" name="role"><option value="member">Read-only member</option><option value="owner">Owner</option></select>
    <${ErrorNote} error=${error} />
    ${
      result
        ? html`<p role="status">${result.delivery === 'sent' ? `Invitation mailed to ${result.email}.` : html`No mail server is configured: send this link to ${result.email} yourself: <code class="key break">${result.link}</code>`}</p>`
        : null
    }
    <button type="submit">Send invitation</button>
  </form>`;
}

function PersonActions({ person, onChanged, setError }) {
  const [confirming, setConfirming] = useState(false);
  const call = async (path, options) => {
    try {
      await api(path, options);
      setError(undefined);
      setConfirming(false);
      onChanged();
    } catch (caught) {
      setError(caught);
    }
  };
  if (person.you) return html`<span class="muted">you</span>`;
  const otherRole = person.role === 'owner' ? 'member' : 'owner';
  return html`<button type="button" onClick=${() => call(`people/${person.id}/role`, { method: 'POST', body: { role: otherRole } })}>
      Make ${otherRole === 'owner' ? 'owner' : 'read-only'}</button>
    ${
      confirming
        ? html`<span role="alertdialog" aria-label=${`Remove ${person.email}?`} class="notice">Remove ${person.email}? <button type="button" class="danger" onClick=${() => call(`people/${person.id}`, { method: 'DELETE' })}>Yes, remove</button><button type="button" class="secondary" onClick=${() => setConfirming(false)}>Cancel</button></span>`
        : html`<button type="button" class="danger" onClick=${() => setConfirming(true)}>Remove</button>`
    }`;
}

export function PeoplePage({ session }) {
  const load = useCallback(() => api('people'), []);
  const [{ data, error }, refresh] = usePoll(load, 0);
  const [actionError, setActionError] = useState(undefined);
  const owner = session.role === 'owner';
  return html`<main>
    <h1>People</h1>
    <p class="muted">Owners manage keys and people; read-only members see everything but change nothing. Removing someone ends their sessions at once.</p>
    ${owner ? html`<${InviteForm} onInvited=${refresh} />` : null}
    <${ErrorNote} error=${error ?? actionError} />
    <div class="table-wrap"><table aria-label="People of the organization">
      <thead><tr><th>Email</th><th>Role</th><th>Password</th><th>Two-factor</th><th>Last seen</th>${owner ? html`<th>Actions</th>` : null}</tr></thead>
      <tbody>${(data?.data ?? []).map(
        (person) => html`<tr key=${person.id}><td>${person.email}</td><td>${person.role === 'member' ? 'read-only member' : 'owner'}</td>
          <td>${person.password_set ? 'set' : 'invited'}</td><td>${person.totp_enabled ? 'on' : 'off'}</td><td class="nowrap">${day(person.last_seen_at)}</td>
          ${owner ? html`<td class="actions"><${PersonActions} person=${person} onChanged=${refresh} setError=${setActionError} /></td>` : null}</tr>`,
      )}</tbody>
    </table></div>
  </main>`;
}

/** Changing one's own password: the current one is required; other sessions end. */
export function PasswordForm() {
  const [error, setError] = useState(undefined);
  const [done, setDone] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    try {
      await api('password', { method: 'POST', body: { current_password: form.get('current'), new_password: form.get('next') } });
      element.reset();
      setError(undefined);
      setDone(true);
    } catch (caught) {
      setError(caught);
      setDone(false);
    }
  };
  return html`<form class="card" aria-label="Change password" onSubmit=${submit}>
    <h2>Password</h2>
    <label for="password-current">Current password</label>
    <input id="password-current" name="current" type="password" autocomplete="current-password" required />
    <label for="password-next">New password</label>
    <input id="password-next" name="next" type="password" autocomplete="new-password" required minlength="10" />
    <${ErrorNote} error=${error} />
    ${done ? html`<p role="status">Password changed; your other sessions were signed out.</p>` : null}
    <button type="submit">Change password</button>
  </form>`;
}

/** The banner an organization's people see while it is suspended. */
export function SuspensionBanner() {
  const load = useCallback(() => api('organization'), []);
  const [{ data }] = usePoll(load, 30_000);
  if (data?.status !== 'suspended') return null;
  return html`<p class="banner" role="alert">${data.id} is suspended by the operator: its API keys are refused and its batches are paused. Contact the operator to reactivate it.</p>`;
}
