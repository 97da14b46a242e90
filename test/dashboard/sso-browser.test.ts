// OpenID Connect single sign-on end to end (issue 42): a real provider (oidc-provider) on 127.0.0.1,
// a real Switchyard, Debian's Chromium clicking through the sign-in page, the provider's login and
// consent pages and back. First sign-in makes the account in the organization and with the role the
// rules give; a member the rules make owner becomes owner and never operator; a person removed from
// the group is refused at the next sign-in and their sessions end; an operator ends a person's
// sessions at once; an altered ID token, one for another audience, an expired one, a replayed state,
// denied consent and an unreachable issuer each end on a page that says so, with no session; the
// SSO-only organization's password form is refused while another organization's works.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { DashboardClient } from '../support/dashboard-client.ts';
import { freePort } from '../support/free-port.ts';
import { startOidcTestProvider, type OidcTestProvider } from '../support/oidc-test-provider.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const CLIENT_SECRET = 'switchyard-test-client-secret-0123456789';
const available = chromiumAvailable();

/** Signs in at the provider's own pages (its login takes any password for a known login), then consents. */
async function throughProvider(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

describe('single sign-on in Chromium', { skip: !available }, () => {
  let provider: OidcTestProvider;
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  let secrets: string;
  const pageErrors: string[] = [];

  /** The browser's session as the dashboard API sees it (read with the browser's cookie: the failure page allows no fetch). */
  const session = async () => {
    const cookie = (await page.context().cookies()).find((entry) => entry.name === 'switchyard_session')?.value;
    const client = new DashboardClient(server.origin);
    return client.request('GET', 'session', undefined, { cookie: cookie ?? null });
  };
  const signInWithProvider = async (login: string) => {
    await page.context().clearCookies();
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await throughProvider(page, login);
  };
  const failurePage = async () => {
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    return { message: await page.locator('#sso-error').innerText(), code: await page.locator('code').innerText() };
  };

  before(async () => {
    provider = await startOidcTestProvider();
    secrets = mkdtempSync(join(tmpdir(), 'switchyard-sso-'));
    writeFileSync(join(secrets, 'client-secret'), `${CLIENT_SECRET}\n`);
    const rules = [
      { claim: 'groups', value: 'switchyard-operators', role: 'operator' as const },
      { claim: 'groups', value: 'acme-owners', organization: 'org-acme', role: 'owner' as const },
      { claim: 'groups', value: 'acme-staff', organization: 'org-acme', role: 'member' as const },
    ];
    server = await startTestServer({
      config: {
        sso: {
          providers: [
            {
              id: 'test-idp',
              label: 'Sign in with Test IdP',
              name: 'Test IdP',
              issuer: provider.issuer,
              clientId: 'switchyard',
              clientSecret: { file: join(secrets, 'client-secret') },
              scopes: ['openid', 'email', 'groups'],
              allowInsecureHttp: true,
              rules,
            },
            {
              id: 'gone-idp',
              label: 'Sign in with Gone IdP',
              issuer: `http://127.0.0.1:${await freePort()}`,
              clientId: 'switchyard',
              allowInsecureHttp: true,
              timeoutMs: 2_000,
              rules,
            },
          ],
          ssoOnlyOrganizations: ['org-acme'],
        },
      },
    });
    provider.configure([
      { clientId: 'switchyard', clientSecret: CLIENT_SECRET, redirectUris: [`${server.origin}/dashboard/api/sso/test-idp/callback`] },
    ]);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    if (process.env['DEBUG_SSO']) page.on('framenavigated', (frame) => console.log('NAV', frame.url()));
    if (process.env['DEBUG_SSO'])
      page.on('response', async (response) => {
        if (response.status() >= 400)
          console.log('RESP', response.status(), response.url(), (await response.text().catch(() => '')).slice(0, 400));
      });
    // The provider's pages import a web font: nothing leaves this machine.
    await browser.context.route(/fonts\.googleapis\.com/, (route) => route.abort());
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await provider?.close();
    if (secrets !== undefined) rmSync(secrets, { recursive: true, force: true });
  });

  test('the first sign-in makes the account in the mapped organization with the mapped role; the session is a normal one', async () => {
    provider.people.set('alice', { email: 'Alice@acme.example', groups: ['acme-owners'] });
    await signInWithProvider('alice');
    await page.waitForURL(/\/dashboard\/keys$/);
    const alice = await server.runtime.accounts.findOwnerByEmail('alice@acme.example');
    assert.ok(alice, 'the account was made at the first sign-in');
    assert.equal(alice.organizationId, 'org-acme');
    assert.equal(alice.role, 'owner');
    assert.equal(alice.passwordHash, null);
    const current = await session();
    assert.equal(current.status, 200);
    assert.equal(current.body.role, 'owner');
    assert.equal(current.body.organization, 'org-acme');
    // CSRF as for password sessions: a change without the header is refused, with it accepted.
    const refused = await page.evaluate(
      async () =>
        (await fetch('/dashboard/api/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' }))
          .status,
    );
    assert.equal(refused, 401);
    const audit = await server.runtime.accounts.listAudit('org-acme');
    const actions = audit.filter((entry) => entry.actor === 'alice@acme.example').map((entry) => `${entry.action} ${entry.target}`);
    assert.ok(actions.includes('account.created sso:test-idp'), actions.join(', '));
    assert.ok(actions.includes('sign_in.succeeded sso:test-idp'), actions.join(', '));
    // Sign-out ends it like any session.
    const signedOut = await page.evaluate(
      async (csrf: string) => (await fetch('/dashboard/api/sign-out', { method: 'POST', headers: { 'x-csrf-token': csrf } })).status,
      current.body.csrf_token,
    );
    assert.equal(signedOut, 200);
    assert.equal((await session()).status, 401);
  });

  test('a member the rules make owner becomes owner at the next sign-in, never operator', async () => {
    provider.people.set('bob', { email: 'bob@acme.example', groups: ['acme-staff'] });
    await signInWithProvider('bob');
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.equal((await session()).body.role, 'member');
    provider.people.set('bob', { email: 'bob@acme.example', groups: ['acme-staff', 'acme-owners'] });
    await signInWithProvider('bob');
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.equal((await session()).body.role, 'owner');
    const operatorArea = await page.evaluate(async () => (await fetch('/dashboard/api/operator/organizations')).status);
    assert.equal(operatorArea, 403);
    const bob = await server.runtime.accounts.findOwnerByEmail('bob@acme.example');
    assert.equal(bob?.role, 'owner');
    assert.equal(bob?.organizationId, 'org-acme');
  });

  test('a person removed from the group is refused at the next sign-in and their open sessions end', async () => {
    provider.people.set('carol', { email: 'carol@acme.example', groups: ['acme-staff'] });
    await signInWithProvider('carol');
    await page.waitForURL(/\/dashboard\/keys$/);
    const cookie = (await page.context().cookies()).find((entry) => entry.name === 'switchyard_session')!.value;
    const other = new DashboardClient(server.origin);
    other.cookie = cookie;
    assert.equal((await other.request('GET', 'session')).status, 200);
    provider.people.set('carol', { email: 'carol@acme.example', groups: [] });
    await signInWithProvider('carol');
    const failure = await failurePage();
    assert.equal(failure.code, 'no_access');
    assert.match(failure.message, /not in any group/);
    assert.equal((await other.request('GET', 'session')).status, 401, 'the session open before is over');
    assert.equal((await session()).status, 401);
  });

  test("an operator ends a person's sessions at once", async () => {
    provider.people.set('dave', { email: 'dave@acme.example', groups: ['acme-staff'] });
    await signInWithProvider('dave');
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.equal((await session()).status, 200);
    const issued = await server.runtime.people.createOperator('ops@switchyard.test', server.origin);
    const token = /#token=([A-Za-z0-9]+)/.exec(issued.link)![1]!;
    await server.runtime.accounts.setPasswordWithLink(token, PASSWORD, { address: '127.0.0.1', userAgent: null });
    // The operator, in their own browser, presses "End sessions" on Dave's row.
    const operatorBrowser = await launchChromium();
    try {
      const operatorPage = await operatorBrowser.context.newPage();
      operatorPage.on('pageerror', (error) => pageErrors.push(error.message));
      await operatorPage.goto(`${server.origin}/dashboard/sign-in`);
      await operatorPage.getByLabel('Email').fill('ops@switchyard.test');
      await operatorPage.getByLabel('Password').fill(PASSWORD);
      await operatorPage.getByRole('button', { name: 'Sign in', exact: true }).click();
      await operatorPage.waitForURL(/\/dashboard\/operator\/organizations$/);
      await operatorPage.goto(`${server.origin}/dashboard/operator/organizations/org-acme`);
      const row = operatorPage.getByRole('table', { name: 'People' }).getByRole('row').filter({ hasText: 'dave@acme.example' });
      await row.getByRole('button', { name: 'End sessions' }).click();
      await operatorPage.getByText('Ended 1 session of dave@acme.example.').waitFor();
    } finally {
      await operatorBrowser.close();
    }
    assert.equal((await session()).status, 401);
    const dave = (await server.runtime.accounts.findOwnerByEmail('dave@acme.example'))!;
    const operatorLog = await server.runtime.database.db
      .selectFrom('operator_audit')
      .selectAll()
      .where('action', '=', 'person.sessions_ended')
      .execute();
    assert.deepEqual(
      operatorLog.map((entry) => [entry.actor, entry.target]),
      [['ops@switchyard.test', dave.id]],
    );
    const operator = new DashboardClient(server.origin);
    assert.equal((await operator.signIn('ops@switchyard.test', PASSWORD)).status, 200);
    const unknown = await operator.request('POST', 'operator/people/own_nobody/sessions/revoke');
    assert.equal(unknown.status, 404);
    // Not for an owner.
    const owner = new DashboardClient(server.origin);
    await server.runtime.accounts.createOwner({ organization: 'org-other', email: 'owner@other.example', password: PASSWORD });
    assert.equal((await owner.signIn('owner@other.example', PASSWORD)).status, 200);
    assert.equal((await owner.request('POST', `operator/people/${dave.id}/sessions/revoke`)).status, 403);
  });

  for (const [fault, code] of [
    ['tampered', 'invalid_signature'],
    ['wrong-audience', 'wrong_audience'],
    ['expired', 'token_expired'],
    ['clock-ahead', 'token_expired'],
  ] as const) {
    const what = {
      tampered: 'altered after signing',
      expired: 'already expired',
      'wrong-audience': 'issued for another application',
      'clock-ahead': 'from a provider whose clock is an hour ahead',
    }[fault];
    test(`an ID token ${what} is refused`, async () => {
      provider.people.set('erin', { email: 'erin@acme.example', groups: ['acme-staff'] });
      provider.nextIdToken(fault);
      await signInWithProvider('erin');
      const failure = await failurePage();
      assert.equal(failure.code, code, failure.message);
      assert.equal((await session()).status, 401);
      assert.equal(await server.runtime.accounts.findOwnerByEmail('mallory@acme.example'), undefined);
    });
  }

  test('an existing password account with the same email is not linked unless the operator allows it', async () => {
    await server.runtime.accounts.createOwner({ organization: 'org-acme', email: 'ivy@acme.example', password: PASSWORD });
    provider.people.set('ivy', { email: 'ivy@acme.example', groups: ['acme-owners'] });
    await signInWithProvider('ivy');
    const failure = await failurePage();
    assert.equal(failure.code, 'account_exists');
    assert.match(failure.message, /has not allowed linking/);
    assert.equal((await session()).status, 401);
    const ivy = await server.runtime.accounts.findOwnerByEmail('ivy@acme.example');
    assert.equal(ivy?.role, 'owner');
    assert.notEqual(ivy?.passwordHash, null);
  });

  test('a replayed state is refused: each sign-in finishes once', async () => {
    provider.people.set('frank', { email: 'frank@acme.example', groups: ['acme-staff'] });
    const callbacks: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/dashboard/api/sso/test-idp/callback')) callbacks.push(request.url());
    });
    await signInWithProvider('frank');
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.equal(callbacks.length, 1);
    await page.goto(callbacks[0]!);
    const failure = await failurePage();
    assert.equal(failure.code, 'state_unknown');
  });

  test('denied consent and an unreachable issuer end on a page that says so', async () => {
    provider.people.set('grace', { email: 'grace@acme.example', groups: ['acme-staff'] });
    await page.context().clearCookies();
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.locator('input[name="login"]').fill('grace');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    const denied = await failurePage();
    assert.equal(denied.code, 'consent_denied');
    assert.equal(await server.runtime.accounts.findOwnerByEmail('grace@acme.example'), undefined);

    await page.goto(`${server.origin}/dashboard/sign-in`);
    const response = page.waitForResponse(/\/dashboard\/api\/sso\/gone-idp\/start/);
    await page.getByRole('link', { name: 'Sign in with Gone IdP' }).click();
    assert.equal((await response).status(), 502);
    const unreachable = await failurePage();
    assert.equal(unreachable.code, 'provider_unreachable');
    assert.match(unreachable.message, /cannot be reached/);
  });

  test("the SSO-only organization's password form is refused; another organization's still works", async () => {
    await server.runtime.accounts.createOwner({ organization: 'org-acme', email: 'legacy@acme.example', password: PASSWORD });
    await page.context().clearCookies();
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByLabel('Email').fill('legacy@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('signs in with single sign-on only').waitFor();
    assert.equal((await session()).status, 401);
    const api = await new DashboardClient(server.origin).signIn('legacy@acme.example', PASSWORD);
    assert.equal(api.status, 403);
    assert.equal(api.body.error.code, 'sso_required');

    await page.getByLabel('Email').fill('owner@other.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.equal((await session()).body.organization, 'org-other');
    assert.deepEqual(pageErrors, []);
  });
});
