// Issue 40 item 1 in Chromium: the operator's "Send set-password link" asks for the operator's own
// password before a link is made, and the set-password page of an account with TOTP on sets the
// password, then asks for the authenticator code before anything opens (no session without it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const OWNER = 'tess@acme.example';
const available = chromiumAvailable();

describe('set-password links in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  let totp: TOTP;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    await server.createKey({ organization: 'org-acme' });
    await createOwner(server.runtime, 'org-acme', OWNER, PASSWORD);
    const owner = new DashboardClient(server.origin);
    assert.equal((await owner.signIn(OWNER, PASSWORD)).status, 200);
    const enrolment = await owner.request('POST', 'totp/enrol');
    totp = new TOTP({ secret: Secret.fromBase32(enrolment.body.secret), digits: 6, period: 30 });
    assert.equal((await owner.request('POST', 'totp/enable', { code: totp.generate(), password: PASSWORD })).status, 200);
    const operator = await server.runtime.people.createOperator('ops@switchyard.test', server.origin);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.origin}/dashboard/set-password#${operator.link.split('#')[1]}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/operator\/organizations$/);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the operator confirms with their password; the TOTP owner sets a password, then gives the code', async () => {
    await page.goto(`${server.origin}/dashboard/operator/organizations/org-acme`);
    await page.getByRole('button', { name: 'Send set-password link' }).click();
    const confirm = page.getByRole('form', { name: 'Confirm it is you' });
    await confirm.getByLabel('Your password').fill('not my password at all');
    await confirm.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('The current password is wrong.').waitFor();
    await confirm.getByLabel('Your password').fill(PASSWORD);
    await confirm.getByRole('button', { name: 'Send the link' }).click();
    const link = (await page.locator('code', { hasText: '/dashboard/set-password#token=' }).textContent())!.trim();
    assert.match(link, /\/dashboard\/set-password#token=[A-Za-z0-9]{43}$/);

    // The person opens the link in a browser with no session.
    await browser.context.clearCookies();
    await page.goto(link);
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByLabel('Repeat it').fill('a brand new password');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Password set' }).waitFor();
    const sessions = (await browser.context.cookies()).filter((cookie) => cookie.name === 'switchyard_session');
    assert.equal(sessions.length, 0, 'no session before the code');
    // A later 30-second step than the one used to turn TOTP on (a used step is refused as a replay).
    await page.getByLabel('Authenticator code').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.deepEqual(pageErrors, []);
  });
});
