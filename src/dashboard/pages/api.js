// The dashboard's JSON client: same-origin fetch with the session cookie and the CSRF header. A 401
// `session_expired` or `invalid_token` sends the owner to sign-in, remembering where they were.
let csrfToken = '';

export function setCsrfToken(token) {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `Request failed (${status})`);
    this.status = status;
    this.code = error?.code ?? 'unknown';
    this.param = error?.param ?? null;
  }
}

export function signInPath(reason) {
  const here = location.pathname + location.search;
  const next = here.startsWith('/dashboard/sign-in') || here.startsWith('/dashboard/set-password') ? '/dashboard/keys' : here;
  return `/dashboard/sign-in?next=${encodeURIComponent(next)}${reason ? `&reason=${reason}` : ''}`;
}

export async function api(path, { method = 'GET', body, redirectOn401 = true } = {}) {
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
