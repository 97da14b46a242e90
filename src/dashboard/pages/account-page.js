// The account page: sessions, sign out everywhere, TOTP.
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, dateTime, ErrorNote, usePoll } from './components.js';
import { PasswordForm } from './people-page.js';

export function AccountPage({ session, onSignedOut, onChanged }) {
  const load = useCallback(() => api('sessions'), []);
  const [{ data, error }, refresh] = usePoll(load, 0);
  const [enrolment, setEnrolment] = useState(undefined);
  const [actionError, setActionError] = useState(undefined);
  const run = async (path, body) => {
    try {
      const result = await api(path, { method: 'POST', body });
      setActionError(undefined);
      return result;
    } catch (caught) {
      setActionError(caught);
      return undefined;
    }
  };
  const enable = async (event) => {
    event.preventDefault();
    const code = new FormData(event.currentTarget).get('code');
    if (await run('totp/enable', { secret: enrolment.secret, code })) {
      setEnrolment(undefined);
      onChanged();
    }
  };
  return html`<main>
    <h1>Account</h1>
    <p>${session.email} · ${session.role} of ${session.organization}</p>
    <${ErrorNote} error=${error ?? actionError} />
    <${PasswordForm} />
    <section class="card" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor sign-in</h2>
      ${
        session.totp_enabled
          ? html`<p>An authenticator code is required at sign-in.</p><button type="button" onClick=${async () => (await run('totp/disable')) && onChanged()}>Turn off</button>`
          : enrolment
            ? html`<form onSubmit=${enable} aria-label="Confirm authenticator"><p>Add this secret to your authenticator app: <code>${enrolment.secret}</code></p><p class="muted break">${enrolment.uri}</p>
              <label for="totp-code">Code from the app</label><input id="totp-code" name="code" inputmode="numeric" pattern="[0-9]{6}" required /><button type="submit">Turn on</button></form>`
            : html`<button type="button" onClick=${async () => setEnrolment(await run('totp/enrol'))}>Set up an authenticator</button>`
      }
    </section>
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Signed-in sessions</h2>
      <ul class="sessions">${(data?.data ?? []).map(
        (entry) =>
          html`<li key=${entry.id}>${entry.user_agent ?? 'unknown browser'} · ${entry.address ?? ''} · since ${dateTime(entry.created_at)} ${entry.current ? html`<strong>(this one)</strong>` : html`<button type="button" onClick=${async () => (await run(`sessions/${entry.id}/revoke`)) && refresh()}>Sign out</button>`}</li>`,
      )}</ul>
      <button type="button" class="danger" onClick=${async () => (await run('sessions/revoke-all')) && onSignedOut()}>Sign out everywhere</button>
    </section>
  </main>`;
}
