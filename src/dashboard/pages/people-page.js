// @ts-check
// The people page: the organization's owners and read-only members and its pending invitations,
// invitations by email (sent again or revoked), role changes and removal (owners only); and the
// password form every person uses on the account page.
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { html, day, DataTable, ErrorNote, useAction, usePoll } from './components.js';

/**
 * @typedef {object} Person
 * @property {string} id
 * @property {string} email
 * @property {'owner' | 'member'} role
 * @property {boolean} you
 * @property {boolean} password_set
 * @property {boolean} invitation  a pending invitation (no account until its link is used)
 * @property {boolean} totp_enabled
 * @property {number | null} last_seen_at
 */

/**
 * What became of an invitation just sent (or sent again): mailed, or the link to pass on by hand.
 * @param {{ result: { delivery: string, email: string, link: string | null } | undefined }} props
 */
function InvitationSent({ result }) {
  if (!result) return null;
  return html`<p role="status">
    ${
      result.delivery === 'sent'
        ? `Invitation mailed to ${result.email}.`
        : html`No mail server is configured: send this link to ${result.email} yourself:${' '}
          <code class="key break">${result.link}</code>`
    }
  </p>`;
}

/** @param {{ onInvited: () => void }} props */
function InviteForm({ onInvited }) {
  const [result, setResult] = useState(/** @type {any} */ (undefined));
  const action = useAction(onInvited);
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const element = /** @type {HTMLFormElement} */ (event.currentTarget);
    const form = new FormData(element);
    const invited = await action.run('people/invite', { body: { email: form.get('email'), role: form.get('role') } });
    if (invited) {
      element.reset();
      setResult(invited);
    }
  };
  return html`<form class="card" aria-label="Invite someone" onSubmit=${submit}>
    <h2>Invite someone</h2>
    <label for="invite-email">Email</label>
    <input id="invite-email" name="email" type="email" required maxlength="254" />
    <label for="invite-role">Role</label>
    <select id="invite-role" name="role">
      <option value="member">Read-only member</option>
      <option value="owner">Owner</option>
    </select>
    <${ErrorNote} error=${action.error} />
    <${InvitationSent} result=${result} />
    <button type="submit">Send invitation</button>
  </form>`;
}

/**
 * A person's actions; a pending invitation is sent again or revoked (its link stops working).
 * @param {{ person: Person, run: ReturnType<typeof useAction>['run'], onSent: (result: any) => void }} props
 */
function PersonActions({ person, run, onSent }) {
  const [confirming, setConfirming] = useState(false);
  if (person.you) return html`<span class="muted">you</span>`;
  const otherRole = person.role === 'owner' ? 'member' : 'owner';
  const verb = person.invitation ? 'Revoke' : 'Remove';
  const question = person.invitation ? `Revoke the invitation to ${person.email}?` : `Remove ${person.email}?`;
  const remove = async () => {
    if (await run(`people/${person.id}`, { method: 'DELETE' })) setConfirming(false);
  };
  const resend = async () => {
    const sent = await run(`people/${person.id}/resend`);
    if (sent) onSent(sent);
  };
  return html`<button type="button" onClick=${() => run(`people/${person.id}/role`, { body: { role: otherRole } })}>
      Make ${otherRole === 'owner' ? 'owner' : 'read-only'}
    </button>
    ${person.invitation ? html`<button type="button" class="secondary" onClick=${resend}>Send again</button>` : null}
    ${
      confirming
        ? html`<span role="alertdialog" aria-label=${question} class="notice">
          ${question}${' '}
          <button type="button" class="danger" onClick=${remove}>Yes, ${verb.toLowerCase()}</button>
          <button type="button" class="secondary" onClick=${() => setConfirming(false)}>Cancel</button>
        </span>`
        : html`<button type="button" class="danger" onClick=${() => setConfirming(true)}>${verb}</button>`
    }`;
}

/** @param {import('./types.js').PageProps} props */
export function PeoplePage({ session }) {
  /** @type {[import('./components.js').Polled<import('./types.js').ListOf<Person>>, () => void]} */
  const [{ data, error }, refresh] = usePoll('people', 0);
  const action = useAction(refresh);
  const [sent, setSent] = useState(/** @type {any} */ (undefined));
  const owner = session.role === 'owner';
  /** @type {import('./components.js').Column<Person>[]} */
  const columns = [
    { label: 'Email', cell: (person) => person.email },
    { label: 'Role', cell: (person) => (person.role === 'member' ? 'read-only member' : 'owner') },
    { label: 'Password', cell: (person) => (person.password_set ? 'set' : person.invitation ? 'invited' : 'not set') },
    { label: 'Two-factor', cell: (person) => (person.totp_enabled ? 'on' : 'off') },
    { label: 'Last seen', className: 'nowrap', cell: (person) => day(person.last_seen_at) },
  ];
  if (owner)
    columns.push({
      label: 'Actions',
      className: 'actions',
      cell: (person) => html`<${PersonActions} person=${person} run=${action.run} onSent=${setSent} />`,
    });
  return html`<main>
    <h1>People</h1>
    <p class="muted">
      Owners manage keys and people; read-only members see everything but change nothing. Removing someone ends their sessions at once.
    </p>
    ${owner ? html`<${InviteForm} onInvited=${refresh} />` : null}
    <${ErrorNote} error=${error ?? action.error} />
    <${InvitationSent} result=${sent} />
    <${DataTable}
      label="People of the organization"
      columns=${columns}
      rows=${data?.data}
      rowKey=${(/** @type {Person} */ person) => person.id}
    />
  </main>`;
}

/** Changing one's own password: the current one is required; other sessions end. */
export function PasswordForm() {
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  const [done, setDone] = useState(false);
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const element = /** @type {HTMLFormElement} */ (event.currentTarget);
    const form = new FormData(element);
    try {
      await api('password', { method: 'POST', body: { current_password: form.get('current'), new_password: form.get('next') } });
      element.reset();
      setError(undefined);
      setDone(true);
    } catch (caught) {
      setError(/** @type {Error} */ (caught));
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
  /** @type {[import('./components.js').Polled<{ id: string, status: string }>, () => void]} */
  const [{ data }] = usePoll('organization', 30_000);
  if (data?.status !== 'suspended') return null;
  return html`<p class="banner" role="alert">
    ${data.id} is suspended by the operator: its API keys are refused and its batches are paused. Contact the operator to reactivate it.
  </p>`;
}
