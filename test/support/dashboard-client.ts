/**
 * A small client of the dashboard's JSON API for tests: signs in, keeps the session cookie and the
 * CSRF token, and sends requests with them (or deliberately without).
 */
import type OpenAI from 'openai';
import type { Runtime } from '../../src/runtime.ts';

export interface DashboardResponse {
  status: number;
  body: any;
  headers: Headers;
}

export class DashboardClient {
  cookie: string | undefined;
  csrf: string | undefined;
  /** The full Set-Cookie header of the last sign-in. */
  setCookie: string | undefined;

  constructor(readonly origin: string) {}

  async signIn(email: string, password: string, extra: Record<string, string> = {}): Promise<DashboardResponse> {
    const response = await this.request('POST', 'sign-in', { email, password, ...extra }, { csrf: false });
    if (response.status === 200) {
      this.setCookie = response.headers.get('set-cookie') ?? undefined;
      this.cookie = /switchyard_session=([^;]+)/.exec(this.setCookie ?? '')?.[1];
      this.csrf = response.body.csrf_token;
    }
    return response;
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: boolean; cookie?: string | null; headers?: Record<string, string> } = {},
  ): Promise<DashboardResponse> {
    const headers: Record<string, string> = { ...options.headers };
    const cookie = options.cookie === undefined ? this.cookie : options.cookie;
    if (cookie !== undefined && cookie !== null) headers['cookie'] = `switchyard_session=${cookie}`;
    if ((options.csrf ?? true) && this.csrf !== undefined && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.origin}/dashboard/api/${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // CSV and file downloads stay text.
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }
}

/** Creates an owner with a password through the runtime's accounts (as `owners create --password-stdin` does). */
export async function createOwner(
  runtime: Runtime,
  organization: string,
  email: string,
  password: string,
  options: { role?: 'owner' | 'member'; allowedTiers?: string[] } = {},
): Promise<void> {
  await runtime.accounts.createOwner({ organization, email, password, ...options });
}

/** Polls `check` until it returns a value (the ledger is written about once a second). Bounded. */
export async function eventually<T>(check: () => Promise<T | undefined>, attempts = 100, delayMs = 100): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  throw new Error('condition not met in time');
}

/** The HTTP status the openai SDK fails with once a revoked key is refused (revocation reaches every cache within a poll). */
export async function sdkFailureStatus(client: OpenAI): Promise<number | undefined> {
  return eventually(async () => {
    try {
      await client.models.list();
      return undefined;
    } catch (error) {
      return (error as { status?: number }).status;
    }
  });
}
