// @ts-check
// The dashboard's JSON client: same-origin fetch with the session cookie and the CSRF header. A 401
// `session_expired` or `invalid_token` sends the owner to sign-in, remembering where they were.
let csrfToken = '';

/** @param {string} token */
export function setCsrfToken(token) {
  csrfToken = token;
}

/** The session's CSRF token, for a request this client does not send itself (a multipart upload). */
export const currentCsrfToken = () => csrfToken;

export class ApiError extends Error {
  /** @param {number} status @param {{ message?: string, code?: string, param?: string | null } | undefined} error */
  constructor(status, error) {
    super(error?.message ?? `Request failed (${status})`);
    this.status = status;
    this.code = error?.code ?? 'unknown';
    this.param = error?.param ?? null;
  }
}

/** @param {string | undefined} reason */
export function signInPath(reason) {
  const here = location.pathname + location.search;
  const next = here.startsWith('/dashboard/sign-in') || here.startsWith('/dashboard/set-password') ? '/dashboard/keys' : here;
  return `/dashboard/sign-in?next=${encodeURIComponent(next)}${reason ? `&reason=${reason}` : ''}`;
}

/**
 * @param {string} path  under /dashboard/api/
 * @param {{ method?: string, body?: unknown, redirectOn401?: boolean }} [options]
 * @returns {Promise<any>} the JSON answer (its type is the caller's: see types.js)
 */
export async function api(path, { method = 'GET', body, redirectOn401 = true } = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/dashboard/api/${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new ApiError(response.status, payload.error);
    if (response.status === 401 && redirectOn401 && (error.code === 'session_expired' || error.code === 'invalid_token')) {
      window.dispatchEvent(new CustomEvent('dashboard:signed-out', { detail: error.code }));
    }
    throw error;
  }
  return payload;
}
