// @ts-check
// The account page: password, TOTP, sessions.
import { useState } from 'preact/hooks';
import { html, dateTime, CopyButton, ErrorNote, useAction, usePoll } from './components.js';
import { PasswordForm } from './people-page.js';

/** @param {SubmitEvent} event */
const formOf = (event) => {
  event.preventDefault();
  return new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
};

/** @param {{ codes: string[] }} props */
function RecoveryCodes({ codes }) {
  // One code a line, for the clipboard and a text file (a data: link: nothing leaves the browser).
  const text = `${codes.join('\n')}\n`;
  const download = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  return html`<div aria-label="Recovery codes">
    <p>
      Recovery codes: each signs you in once instead of a code from the app. Keep them somewhere safe; they are shown only now.
    </p>
    <ul class="recovery-codes">
      ${codes.map((code) => html`<li key=${code}><code>${code}</code></li>`)}
    </ul>
    <p class="toolbar">
      <${CopyButton} text=${text} label="Copy the recovery codes" />
      <a href=${download} download="switchyard-recovery-codes.txt">Download the recovery codes</a>
    </p>
  </div>`;
}

/** @param {{ onSubmit: (event: SubmitEvent) => void }} props */
function TotpOffForm({ onSubmit }) {
  return html`<form onSubmit=${onSubmit} aria-label="Turn off authenticator">
    <p>An authenticator code is required at sign-in. To turn it off, confirm with your password or a current code.</p>
    <label for="totp-off-password">Current password</label>
    <input id="totp-off-password" name="password" type="password" autocomplete="current-password" />
    <label for="totp-off-code">or a code from the app</label>
    <input id="totp-off-code" name="code" autocomplete="one-time-code" />
    <button type="submit">Turn off</button>
  </form>`;
}

/** @param {{ enrolment: { secret: string, uri: string, qr_code: string }, onSubmit: (event: SubmitEvent) => void }} props */
function TotpOnForm({ enrolment, onSubmit }) {
  return html`<form onSubmit=${onSubmit} aria-label="Confirm authenticator">
    <p>
      Scan this code with your authenticator app, or enter the secret:
      ${' '}<code>${enrolment.secret}</code>
    </p>
    <img src=${enrolment.qr_code} alt="QR code of the authenticator secret" width="200" height="200" />
    <p class="muted break">${enrolment.uri}</p>
    <label for="totp-code">Code from the app</label>
    <input id="totp-code" name="code" inputmode="numeric" pattern="[0-9]{6}" required />
    <label for="totp-password">Current password</label>
    <input id="totp-password" name="password" type="password" autocomplete="current-password" required />
    <button type="submit">Turn on</button>
  </form>`;
}

// Turning the second factor on or off asks for the current password (or, to turn it off, a code) and
// signs out every other session.
/** @param {{ session: import('./types.js').SessionObject, run: ReturnType<typeof useAction>['run'], onChanged: () => void }} props */
function TotpCard({ session, run, onChanged }) {
  const [enrolment, setEnrolment] = useState(/** @type {any} */ (undefined));
  const [recoveryCodes, setRecoveryCodes] = useState(/** @type {string[] | undefined} */ (undefined));
  /** @param {SubmitEvent} event */
  const enable = async (event) => {
    const form = formOf(event);
    const enabled = await run('totp/enable', { body: { code: form.get('code'), password: form.get('password') } });
    if (enabled) {
      setEnrolment(undefined);
      setRecoveryCodes(enabled.recovery_codes);
      onChanged();
    }
  };
  /** @param {SubmitEvent} event */
  const disable = async (event) => {
    const form = formOf(event);
    const password = form.get('password');
    const code = form.get('code');
    if (await run('totp/disable', { body: { ...(password ? { password } : {}), ...(code ? { code } : {}) } })) onChanged();
  };
  return html`<section class="card" aria-labelledby="totp-title">
    <h2 id="totp-title">Two-factor sign-in</h2>
    ${recoveryCodes ? html`<${RecoveryCodes} codes=${recoveryCodes} />` : null}
    ${
      session.totp_enabled
        ? html`<${TotpOffForm} onSubmit=${disable} />`
        : enrolment
          ? html`<${TotpOnForm} enrolment=${enrolment} onSubmit=${enable} />`
          : html`<button type="button" onClick=${async () => setEnrolment(await run('totp/enrol'))}>Set up an authenticator</button>`
    }
  </section>`;
}

/** @param {import('./types.js').PageProps} props */
export function AccountPage({ session, onSignedOut, onChanged }) {
  /** @type {[import('./components.js').Polled<import('./types.js').ListOf<any>>, () => void]} */
  const [{ data, error }, refresh] = usePoll('sessions', 0);
  // Only revoking one session refreshes the list; the TOTP calls change the session instead.
  const action = useAction(undefined);
  /** @param {string} id */
  const revoke = async (id) => (await action.run(`sessions/${id}/revoke`)) && refresh();
  return html`<main>
    <h1>Account</h1>
    <p>${session.email} · ${session.role} of ${session.organization}</p>
    <${ErrorNote} error=${error ?? action.error} />
    <${PasswordForm} />
    <${TotpCard} session=${session} run=${action.run} onChanged=${onChanged} />
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Signed-in sessions</h2>
      <ul class="sessions">
        ${(data?.data ?? []).map(
          (entry) => html`<li key=${entry.id}>
            ${entry.user_agent ?? 'unknown browser'} · ${entry.address ?? ''} · since ${dateTime(entry.created_at)}${' '}
            ${
              entry.current
                ? html`<strong>(this one)</strong>`
                : html`<button type="button" onClick=${() => revoke(entry.id)}>Sign out</button>`
            }
          </li>`,
        )}
      </ul>
      <button type="button" class="danger" onClick=${async () => (await action.run('sessions/revoke-all')) && onSignedOut()}>
        Sign out everywhere
      </button>
    </section>
  </main>`;
}
