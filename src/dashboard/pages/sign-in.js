// @ts-check
// Sign-in and set-password pages.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, ErrorNote } from './components.js';

/** @typedef {(session: import('./types.js').SessionObject, next: string) => void} OnSignedIn */

/** @param {{ onSignedIn: OnSignedIn }} props */
export function SignIn({ onSignedIn }) {
  const params = new URLSearchParams(location.search);
  const reason = params.get('reason');
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  const [needTotp, setNeedTotp] = useState(false);
  const providers = useSsoProviders();
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    try {
      const totp = form.get('totp');
      const session = await api('sign-in', {
        method: 'POST',
        body: { email: form.get('email'), password: form.get('password'), ...(totp ? { totp } : {}) },
        redirectOn401: false,
      });
      const next = params.get('next');
      onSignedIn(session, next && next.startsWith('/dashboard/') && !next.startsWith('//') ? next : '/dashboard/keys');
    } catch (caught) {
      if (/** @type {{ code?: string }} */ (caught).code === 'totp_required') setNeedTotp(true);
      setError(/** @type {Error} */ (caught));
    }
  };
  return html`<main class="narrow">
    <h1>Sign in</h1>
    ${
      reason === 'session_expired'
        ? html`<p class="notice" role="status">Your session expired. Sign in again to go back where you were.</p>`
        : null
    }
    ${reason === 'invalid_token' ? html`<p class="notice" role="status">Please sign in.</p>` : null}
    ${
      providers.data.length > 0
        ? html`<nav aria-label="Single sign-on">
            ${providers.data.map((provider) => html`<a class="button" href=${provider.start_url}>${provider.label}</a>`)}
          </nav>
          <p class="muted">${providers.sso_only ? 'Password sign-in is for the break-glass operator account only.' : 'Or sign in with a password:'}</p>`
        : null
    }
    <form onSubmit=${submit} aria-label="Sign in">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      ${
        needTotp
          ? html`<label for="totp">Authenticator code (or a recovery code)</label>
            <input id="totp" name="totp" autocomplete="one-time-code" required />`
          : null
      }
      <button type="submit">Sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`;
}

/** @typedef {{ data: { id: string, label: string, start_url: string }[], sso_only: boolean }} SsoProviders */

/** The configured single sign-on providers (none when the server has no SSO, or while loading). */
function useSsoProviders() {
  const [providers, setProviders] = useState(/** @type {SsoProviders} */ ({ data: [], sso_only: false }));
  useEffect(() => {
    api('sso/providers', { redirectOn401: false })
      .then((answer) => setProviders(/** @type {SsoProviders} */ (answer)))
      .catch(() => undefined);
  }, []);
  return providers;
}

/**
 * A set-password link: the new password, then (an account with TOTP on) the code, exactly as sign-in
 * asks for it. No session opens before the second factor.
 * @param {{ onSignedIn: OnSignedIn }} props
 */
export function SetPassword({ onSignedIn }) {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  const [passwordSet, setPasswordSet] = useState(/** @type {{ email: string, password: string } | undefined} */ (undefined));
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    if (form.get('password') !== form.get('confirm')) return setError(new Error('The two passwords differ.'));
    try {
      const answer = await api('set-password', { method: 'POST', body: { token, password: form.get('password') }, redirectOn401: false });
      if (answer.object === 'dashboard.password_set') {
        setError(undefined);
        setPasswordSet({ email: answer.email, password: String(form.get('password')) });
        return;
      }
      onSignedIn(answer, '/dashboard/keys');
    } catch (caught) {
      setError(/** @type {Error} */ (caught));
    }
  };
  /** @param {SubmitEvent} event */
  const submitCode = async (event) => {
    event.preventDefault();
    if (passwordSet === undefined) return;
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    try {
      const session = await api('sign-in', {
        method: 'POST',
        body: { email: passwordSet.email, password: passwordSet.password, totp: form.get('totp') },
        redirectOn401: false,
      });
      onSignedIn(session, '/dashboard/keys');
    } catch (caught) {
      setError(/** @type {Error} */ (caught));
    }
  };
  if (passwordSet !== undefined)
    return html`<main class="narrow">
      <h1>Password set</h1>
      <p role="status">Your password is set. Two-factor sign-in is on for ${passwordSet.email}: enter your code to sign in.</p>
      <form onSubmit=${submitCode} aria-label="Second factor">
        <label for="totp">Authenticator code (or a recovery code)</label>
        <input id="totp" name="totp" autocomplete="one-time-code" required />
        <button type="submit">Sign in</button>
      </form>
      <${ErrorNote} error=${error} />
    </main>`;
  return html`<main class="narrow">
    <h1>Choose a password</h1>
    <form onSubmit=${submit} aria-label="Set password">
      <label for="new-password">New password (at least 10 characters)</label>
      <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="10" required />
      <label for="confirm-password">Repeat it</label>
      <input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="10" required />
      <button type="submit">Set password and sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`;
}
