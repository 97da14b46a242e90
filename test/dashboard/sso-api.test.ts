// Single sign-on's start and callback over plain HTTP (no browser): the pending sign-in is bound to the
// browser that started it (a callback without its cookie is refused, and the state is spent), expires,
// is purged once expired as new sign-ins start, and an unknown provider or a callback without state
// ends on the failure page, never a stack or a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startOidcTestProvider, type OidcTestProvider } from '../support/oidc-test-provider.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('single sign-on start and callback', () => {
  let provider: OidcTestProvider;
  let server: TestServer;

  before(async () => {
    provider = await startOidcTestProvider();
    server = await startTestServer({
      config: {
        sso: {
          providers: [
            {
              id: 'test-idp',
              label: 'Sign in with Test IdP',
              issuer: provider.issuer,
              clientId: 'switchyard',
              allowInsecureHttp: true,
              rules: [{ claim: 'groups', value: 'acme', organization: 'org-acme', role: 'member' }],
            },
          ],
          maxPendingPerAddress: 5,
        },
      },
    });
    provider.configure([
      {
        clientId: 'switchyard',
        clientSecret: 'unused-secret-0123456789',
        redirectUris: [`${server.origin}/dashboard/api/sso/test-idp/callback`],
      },
    ]);
  });
  after(async () => {
    await server?.close();
    await provider?.close();
  });

  const start = async () => {
    const response = await fetch(`${server.origin}/dashboard/api/sso/test-idp/start`, { redirect: 'manual' });
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get('location')!);
    const cookie = /switchyard_sso=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')![1]!;
    assert.match(response.headers.get('set-cookie')!, /HttpOnly/i);
    assert.match(response.headers.get('set-cookie')!, /SameSite=Lax/i);
    return { location, cookie, state: location.searchParams.get('state')! };
  };
  const callback = async (query: string, cookie?: string) => {
    const response = await fetch(`${server.origin}/dashboard/api/sso/test-idp/callback?${query}`, {
      redirect: 'manual',
      headers: cookie === undefined ? {} : { cookie: `switchyard_sso=${cookie}` },
    });
    const text = await response.text();
    return { status: response.status, code: /<code>([a-z_]+)<\/code>/.exec(text)?.[1], text, type: response.headers.get('content-type') };
  };
  const pendingRows = async () =>
    Number(
      (
        await server.runtime.database.db
          .selectFrom('sso_pending_sign_ins')
          .select((eb) => eb.fn.countAll().as('total'))
          .executeTakeFirstOrThrow()
      ).total,
    );

  test('the start sends the browser to the provider with PKCE S256, a state and a nonce', async () => {
    const { location } = await start();
    assert.equal(location.origin, provider.issuer);
    assert.equal(location.searchParams.get('response_type'), 'code');
    assert.equal(location.searchParams.get('client_id'), 'switchyard');
    assert.equal(location.searchParams.get('code_challenge_method'), 'S256');
    assert.ok((location.searchParams.get('code_challenge') ?? '').length >= 43);
    assert.ok((location.searchParams.get('nonce') ?? '').length >= 32);
    assert.equal(location.searchParams.get('redirect_uri'), `${server.origin}/dashboard/api/sso/test-idp/callback`);
    assert.deepEqual(location.searchParams.get('scope')?.split(' '), ['openid', 'email', 'profile']);
  });

  test('a callback from another browser (no binding cookie) is refused, and its state is spent', async () => {
    const { state, cookie } = await start();
    const stranger = await callback(`code=whatever&state=${state}`);
    assert.equal(stranger.status, 400);
    assert.equal(stranger.code, 'browser_mismatch');
    assert.match(stranger.type ?? '', /text\/html/);
    const replay = await callback(`code=whatever&state=${state}`, cookie);
    assert.equal(replay.code, 'state_unknown');
  });

  test('a started sign-in expires, and expired ones are purged as new ones start', async () => {
    const { state, cookie } = await start();
    await server.runtime.database.db.updateTable('sso_pending_sign_ins').set({ expires_at: 1 }).execute();
    const late = await callback(`code=whatever&state=${state}`, cookie);
    assert.equal(late.code, 'state_expired');
    await start();
    await server.runtime.database.db.updateTable('sso_pending_sign_ins').set({ expires_at: 1 }).execute();
    assert.equal(await pendingRows(), 1);
    await start();
    assert.equal(await pendingRows(), 1, 'the expired row went as the new one came');
  });

  test('no state, an unknown state and an unknown provider end on the failure page', async () => {
    const none = await callback('code=x');
    assert.equal(none.status, 400);
    assert.equal(none.code, 'state_unknown');
    const unknown = await callback('code=x&state=made-up');
    assert.equal(unknown.code, 'state_unknown');
    const response = await fetch(`${server.origin}/dashboard/api/sso/nope/start`, { redirect: 'manual' });
    assert.equal(response.status, 404);
    const text = await response.text();
    assert.match(text, /No sign-in provider &quot;nope&quot; is configured here/);
    assert.doesNotMatch(text, /at .*\.ts:\d+/);
    const injected = await fetch(`${server.origin}/dashboard/api/sso/%3Cscript%3E/start`, { redirect: 'manual' });
    assert.doesNotMatch(await injected.text(), /<script>/);
  });

  test('one address holds a bounded number of unfinished sign-ins: the next gets 429 until one finishes', async () => {
    await server.runtime.database.db.deleteFrom('sso_pending_sign_ins').execute();
    const started = [];
    for (let index = 0; index < 5; index++) started.push(await start());
    const refused = await fetch(`${server.origin}/dashboard/api/sso/test-idp/start`, { redirect: 'manual' });
    assert.equal(refused.status, 429);
    assert.match(await refused.text(), /<code>too_many_sign_ins<\/code>/);
    assert.equal(await pendingRows(), 5);
    // One is taken (here refused for a code the provider never issued): room for a new one.
    const { state, cookie } = started[0]!;
    assert.equal(
      (await callback(`code=never-issued&state=${state}&iss=${encodeURIComponent(provider.issuer)}`, cookie)).code,
      'provider_refused',
    );
    await start();
    assert.equal(await pendingRows(), 5);
  });

  test('the providers list for the sign-in page', async () => {
    const response = await fetch(`${server.origin}/dashboard/api/sso/providers`);
    assert.deepEqual(await response.json(), {
      object: 'list',
      data: [{ id: 'test-idp', label: 'Sign in with Test IdP', start_url: '/dashboard/api/sso/test-idp/start' }],
      sso_only: false,
    });
  });
});
