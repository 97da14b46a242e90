// The alerts pages in Chromium (Debian's, headless, playwright-core) against a real server whose
// webhooks go to real HTTP receivers: an owner adds an endpoint and copies its secret (shown once),
// sends a test sample that arrives signed with that secret and is listed as delivered; an endpoint
// that is down gets its alerts retried and the page lists them as failed with their attempts and the
// last error; deleting asks first. An operator adds an operator endpoint (every organization's alerts)
// and finds the organization's failed deliveries in the log of every delivery. Nothing scrolls
// sideways at phone width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { DOLLAR, FAST_ALERTS, settled, spend } from '../support/alert-observations.ts';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

async function signIn(page: Page, origin: string, email: string, next: string): Promise<void> {
  await page.goto(`${origin}/dashboard/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp(`${next}$`));
}

/** Adds an endpoint through the page's form; the secret the page shows once. */
async function addEndpoint(page: Page, url: string): Promise<string> {
  await page.getByLabel('URL').fill(url);
  await page.getByLabel('Description (optional)').fill('pager');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.getByTestId('new-webhook-secret').textContent())!;
  assert.match(secret, /^whsec_/);
  await page.getByRole('button', { name: 'Done' }).click();
  assert.equal(await page.getByTestId('new-webhook-secret').count(), 0, 'the secret is gone once done');
  await page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('row').filter({ hasText: url }).waitFor();
  return secret;
}

describe('alerts pages in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let down: WebhookReceiver;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    receiver = await startWebhookReceiver('ok');
    down = await startWebhookReceiver('down');
    server = await startTestServer({ config: { alerts: FAST_ALERTS } });
    await server.runtime.accounts.createOwner({ organization: 'org-pages', email: 'pat@pages.test', password: PASSWORD });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signIn(page, server.origin, 'pat@pages.test', '/dashboard/keys');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
    await down?.close();
  });

  test('an owner adds an endpoint, sees its secret once, and a test sample arrives signed and is listed as delivered', async () => {
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'Alerts' }).waitFor();
    await page.getByText('Mail is not configured on this server').waitFor();
    const url = `${receiver.origin}/pages`;
    const secret = await addEndpoint(page, url);
    await page.getByRole('button', { name: `Send a test to ${url}` }).click();
    await page.getByRole('status').filter({ hasText: 'A test event is on its way' }).waitFor();
    // The log polls every 5 s: the sample shows as pending or delivered at once, delivered soon after.
    const row = page.getByRole('table', { name: 'Alert deliveries' }).getByRole('row').filter({ hasText: 'webhook.test' });
    await row.getByText('delivered', { exact: true }).waitFor({ timeout: 20_000 });
    const sample = receiver.at('/pages')[0]!;
    const event = new Webhook(secret).verify(sample.body, sample.headers as Record<string, string>) as { type: string };
    assert.equal(event.type, 'webhook.test');
  });

  test('alerts to a down endpoint are retried, then listed as failed with attempts and the last error', async () => {
    await addEndpoint(page, `${down.origin}/down`);
    server.runtime.alerts.spendObserver.observe(spend('bud_pages', 0.8 * DOLLAR, { organization: 'org-pages' }));
    await settled(server);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    const failed = page
      .getByRole('table', { name: 'Alert deliveries' })
      .getByRole('row')
      .filter({ hasText: `${down.origin}/down` });
    await failed.first().waitFor();
    assert.equal(await failed.count(), 2, '50% and 80%');
    const text = (await failed.first().textContent())!;
    assert.match(text, /failed/);
    assert.match(text, /the endpoint answered HTTP 503/);
    const attempts = Number(await failed.first().locator('td[data-label="Attempts"]').textContent());
    assert.ok(attempts >= 3, `${attempts} attempts`);
    // The emails are listed too: failed at once, since this server has no SMTP.
    const emails = page.getByRole('table', { name: 'Alert deliveries' }).getByRole('row').filter({ hasText: 'email: pat@pages.test' });
    assert.equal(await emails.count(), 2);
    assert.match((await emails.first().textContent())!, /mail is not configured/);

    await page.getByRole('button', { name: `Delete ${down.origin}/down` }).click();
    await page
      .getByRole('dialog', { name: `Delete ${down.origin}/down?` })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page
      .getByRole('table', { name: 'Webhook endpoints' })
      .getByRole('row')
      .filter({ hasText: `${down.origin}/down` })
      .waitFor({ state: 'detached' });
  });

  test("an operator adds an operator endpoint and finds an organization's failed deliveries", async () => {
    // A browser of their own: the owner's session stays in the first one.
    const second = await launchChromium();
    const operatorPage = await second.context.newPage();
    operatorPage.on('pageerror', (error) => pageErrors.push(error.message));
    const issued = await server.runtime.people.createOperator('ops@pages.test', server.origin);
    await operatorPage.goto(`${server.origin}/dashboard/set-password#${issued.link.split('#')[1]}`);
    await operatorPage.getByLabel('New password').fill(PASSWORD);
    await operatorPage.getByLabel('Repeat it').fill(PASSWORD);
    await operatorPage.keyboard.press('Enter');
    await operatorPage.waitForURL(/\/dashboard\/operator\/organizations$/);
    await operatorPage.getByRole('link', { name: 'Alerts' }).click();
    await addEndpoint(operatorPage, `${receiver.origin}/operators`);
    await operatorPage.getByLabel('Status').selectOption('failed');
    await operatorPage.getByLabel('Organization').fill('org-pages');
    await operatorPage.getByRole('button', { name: 'Filter' }).click();
    const rows = operatorPage.getByRole('table', { name: 'Alert deliveries' }).locator('tbody tr');
    await rows
      .filter({ hasText: `${down.origin}/down` })
      .first()
      .waitFor();
    const organizations = await rows.locator('td[data-label="Organization"]').allTextContents();
    assert.ok(organizations.length >= 2 && organizations.every((name) => name === 'org-pages'), organizations.join(', '));
    await second.close();
  });

  test('at phone width (390 px) the alerts page does not scroll sideways', async () => {
    const phone = await launchChromium({ width: 390, height: 844 });
    try {
      const phonePage = await phone.context.newPage();
      phonePage.on('pageerror', (error) => pageErrors.push(error.message));
      await signIn(phonePage, server.origin, 'pat@pages.test', '/dashboard/alerts');
      await phonePage.getByRole('table', { name: 'Alert deliveries' }).locator('tbody tr').first().waitFor();
      const overflow = await phonePage.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.ok(overflow <= 0, `the alerts page is ${overflow}px wider than the screen`);
    } finally {
      await phone.close();
    }
    assert.deepEqual(pageErrors, []);
  });
});
