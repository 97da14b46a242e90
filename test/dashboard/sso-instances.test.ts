// Single sign-on through two instances on one database (Postgres when TEST_DATABASE_URL is set, else
// one SQLite file): a sign-in started on one instance finishes on the other, because the pending
// state (state, nonce, PKCE verifier) is a row in the shared database, taken once. The deployment is
// SSO-only: the password form is refused, except for the documented break-glass operator account,
// which still signs in with its password in Chromium.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { DashboardClient } from '../support/dashboard-client.ts';
import { createSqliteTestDatabase, createTestDatabase, storageBackends, type TestDatabase } from '../support/databases.ts';
import { startOidcTestProvider, type OidcTestProvider } from '../support/oidc-test-provider.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const CLIENT_SECRET = 'switchyard-test-client-secret-0123456789';
const available = chromiumAvailable();

describe('single sign-on across two instances', { skip: !available }, () => {
  let provider: OidcTestProvider;
  let database: TestDatabase;
  let first: TestServer;
  let second: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  let secrets: string;

  before(async () => {
    provider = await startOidcTestProvider();
    secrets = mkdtempSync(join(tmpdir(), 'switchyard-sso-'));
    writeFileSync(join(secrets, 'client-secret'), CLIENT_SECRET);
    database = storageBackends().includes('postgres') ? await createTestDatabase('postgres') : await createSqliteTestDatabase();
    const sso = (publicBaseUrl?: string) => ({
      databaseUrl: database.url,
      ...(publicBaseUrl === undefined ? {} : { server: { publicBaseUrl } }),
      sso: {
        providers: [
          {
            id: 'test-idp',
            label: 'Sign in with Test IdP',
            issuer: provider.issuer,
            clientId: 'switchyard',
            clientSecret: { file: join(secrets, 'client-secret') },
            scopes: ['openid', 'email', 'groups'],
            allowInsecureHttp: true,
            linkExistingAccounts: true,
            rules: [{ claim: 'groups', value: 'acme-staff', organization: 'org-acme', role: 'member' as const }],
          },
        ],
        ssoOnly: true,
        breakGlassOperators: ['Break.Glass@switchyard.test'],
      },
    });
    // The provider sends every browser back to the second instance (as a load balancer might); the
    // first one is told so through publicBaseUrl, the way a deployment names its public address.
    second = await startTestServer({ config: sso() });
    first = await startTestServer({ config: sso(second.origin) });
    provider.configure([
      { clientId: 'switchyard', clientSecret: CLIENT_SECRET, redirectUris: [`${second.origin}/dashboard/api/sso/test-idp/callback`] },
    ]);
    browser = await launchChromium();
    page = await browser.context.newPage();
    await browser.context.route(/fonts\.googleapis\.com/, (route) => route.abort());
  });
  after(async () => {
    await browser?.close();
    await first?.close();
    await second?.close();
    await provider?.close();
    await database?.drop();
    if (secrets !== undefined) rmSync(secrets, { recursive: true, force: true });
  });

  const pendingRows = async (server: TestServer) =>
    Number(
      (
        await server.runtime.database.db
          .selectFrom('sso_pending_sign_ins')
          .select((eb) => eb.fn.countAll().as('total'))
          .executeTakeFirstOrThrow()
      ).total,
    );

  test('a sign-in started on one instance finishes on the other', async () => {
    provider.people.set('henry', { email: 'henry@acme.example', groups: ['acme-staff'] });
    const starts: string[] = [];
    const callbacks: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/dashboard/api/sso/test-idp/start')) starts.push(request.url());
      if (request.url().includes('/dashboard/api/sso/test-idp/callback')) callbacks.push(request.url());
    });
    await page.goto(`${first.origin}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.locator('input[name="login"]').fill('henry');
    assert.equal(await pendingRows(second), 1, 'the started sign-in is a row the other instance sees');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${second.origin}/dashboard/keys`);
    assert.deepEqual(
      starts.map((url) => new URL(url).origin),
      [first.origin],
    );
    assert.deepEqual(
      callbacks.map((url) => new URL(url).origin),
      [second.origin],
    );
    const henry = await second.runtime.accounts.findOwnerByEmail('henry@acme.example');
    assert.equal(henry?.organizationId, 'org-acme');
    assert.equal(henry?.role, 'member');
    assert.equal(await pendingRows(first), 0, 'taken once');
    // The session works on both instances: it is a row too.
    const cookie = (await page.context().cookies()).find((entry) => entry.name === 'switchyard_session')!.value;
    for (const server of [first, second]) {
      const client = new DashboardClient(server.origin);
      assert.equal((await client.request('GET', 'session', undefined, { cookie })).body.email, 'henry@acme.example');
    }
  });

  test('SSO-only refuses the password form; the break-glass operator still signs in with a password', async () => {
    await first.runtime.accounts.createOwner({ organization: 'org-acme', email: 'legacy@acme.example', password: PASSWORD });
    const refused = await new DashboardClient(first.origin).signIn('legacy@acme.example', PASSWORD);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'sso_required');
    // Refused whether or not the account exists: the answer says nothing about accounts.
    const nobody = await new DashboardClient(first.origin).signIn('nobody@acme.example', PASSWORD);
    assert.equal(nobody.body.error.code, 'sso_required');
    // An operator account not named break-glass is refused as well.
    for (const email of ['break.glass@switchyard.test', 'other.operator@switchyard.test']) {
      const issued = await first.runtime.people.createOperator(email, first.origin);
      const token = /#token=([A-Za-z0-9]+)/.exec(issued.link)![1]!;
      await first.runtime.accounts.setPasswordWithLink(token, PASSWORD, { address: '127.0.0.1', userAgent: null });
    }
    assert.equal(
      (await new DashboardClient(second.origin).signIn('other.operator@switchyard.test', PASSWORD)).body.error.code,
      'sso_required',
    );
    // A set-password link would open a password session too: refused, and the link stays unused.
    const legacy = (await first.runtime.accounts.findOwnerByEmail('legacy@acme.example'))!;
    const link = await first.runtime.people.resetLink(legacy, first.origin);
    const token = /#token=([A-Za-z0-9]+)/.exec(link.link)![1]!;
    const viaLink = await new DashboardClient(second.origin).request(
      'POST',
      'set-password',
      { token, password: 'another long password' },
      { csrf: false },
    );
    assert.equal(viaLink.status, 403);
    assert.equal(viaLink.body.error.code, 'sso_required');

    await page.context().clearCookies();
    await page.goto(`${first.origin}/dashboard/sign-in`);
    await page.getByText('Password sign-in is for the break-glass operator account only.').waitFor();
    await page.getByLabel('Email').fill('break.glass@switchyard.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/dashboard\/operator\/organizations$/);
  });

  test('where the operator allows linking, a verified email links the existing account; an unverified one does not', async () => {
    // legacy@acme.example has a password account (the test above) and is an owner there.
    const legacy = (await first.runtime.accounts.findOwnerByEmail('legacy@acme.example'))!;
    provider.people.set('legacy-unverified', { email: 'legacy@acme.example', emailVerified: false, groups: ['acme-staff'] });
    provider.people.set('legacy', { email: 'legacy@acme.example', groups: ['acme-staff'] });
    const signIn = async (login: string) => {
      await page.context().clearCookies();
      await page.goto(`${first.origin}/dashboard/sign-in`);
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await page.locator('input[name="login"]').fill(login);
      await page.locator('input[name="password"]').fill('anything');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
    };
    await signIn('legacy-unverified');
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    assert.equal(await page.locator('code').innerText(), 'email_unverified');
    await signIn('legacy');
    await page.waitForURL(`${second.origin}/dashboard/keys`);
    const linked = (await second.runtime.accounts.findOwnerByEmail('legacy@acme.example'))!;
    assert.equal(linked.id, legacy.id, 'the same account, not a new one');
    assert.equal(linked.role, 'member', 'with the role the rules give now');
    const actions = (await second.runtime.accounts.listAudit('org-acme'))
      .filter((entry) => entry.actor === 'legacy@acme.example')
      .map((entry) => `${entry.action} ${entry.target}`);
    assert.ok(actions.includes('sso.linked sso:test-idp'), actions.join(', '));
    assert.ok(actions.includes('role.changed member sso:test-idp'), actions.join(', '));
  });
});
