// The account page: sessions, sign out everywhere, TOTP.
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, dateTime, ErrorNote, usePoll } from './components.js';
import { PasswordForm } from './people-page.js';

export function AccountPage({ session, onSignedOut, onChanged }) {
  const load = useCallback(() => api('sessions'), []);
  const [{ data, error }, refresh] = usePoll(load, 0);
  const [enrolment, setEnrolment] = useState(undefined);
  const [recoveryCodes, setRecoveryCodes] = useState(undefined);
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
  // Turning the second factor on or off asks for the current password (or, to turn it off, a code)
  // and signs out every other session.
  const enable = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const enabled = await run('totp/enable', { code: form.get('code'), password: form.get('password') });
    if (enabled) {
      setEnrolment(undefined);
      setRecoveryCodes(enabled.recovery_codes);
      onChanged();
    }
  };
  const disable = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = form.get('password');
    const code = form.get('code');
    if (await run('totp/disable', { ...(password ? { password } : {}), ...(code ? { code } : {}) })) onChanged();
  };
  return html`<main>
    <h1>Account</h1>
    <p>${session.email} · ${session.role} of ${session.organization}</p>
    <${ErrorNote} error=${error ?? actionError} />
    <${PasswordForm} />
    <section class="card" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor sign-in</h2>
      ${
        recoveryCodes
          ? html`<div aria-label="Recovery codes"><p>Recovery codes: each signs you in once instead of a code from the app. Keep them somewhere safe; they are shown only now.</p><ul class="recovery-codes">${recoveryCodes.map((code) => html`<li key=${code}><code>${code}</code></li>`)}</ul></div>`
          : null
      }
      ${
        session.totp_enabled
          ? html`<form onSubmit=${disable} aria-label="Turn off authenticator"><p>An authenticator code is required at sign-in. To turn it off, confirm with your password or a current code.</p>
              <label for="totp-off-password">Current password</label><input id="totp-off-password" name="password" type="password" autocomplete="current-password" />
              <label for="totp-off-code">or a code from the app</label><input id="totp-off-code" name="code" autocomplete="one-time-code" /><button type="submit">Turn off</button></form>`
          : enrolment
            ? html`<form onSubmit=${enable} aria-label="Confirm authenticator"><p>Scan this code with your authenticator app, or enter the secret: <code>${enrolment.secret}</code></p><img src=${enrolment.qr_code} alt="QR code of the authenticator secret" width="200" height="200" /><p class="muted break">${enrolment.uri}</p>
              <label for="totp-code">Code from the app</label><input id="totp-code" name="code" inputmode="numeric" pattern="[0-9]{6}" required />
              <label for="totp-password">Current password</label><input id="totp-password" name="password" type="password" autocomplete="current-password" required /><button type="submit">Turn on</button></form>`
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
