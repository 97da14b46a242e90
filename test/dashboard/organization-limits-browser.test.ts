// Keys and storage against the plan's cap and quota in Chromium (issue 37 item 5), against a real
// server: the owner's keys page says "10 of 10 active" and its create form shows the refusal; the
// files page shows the stored bytes against the quota, refreshed after an upload from the page, and the
// upload past the quota is refused with the quota named; the operator's organization page shows both
// figures, and its plan form sets the cap and the quota.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CLI_ACTOR } from '../../src/accounts/organizations.ts';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();
const QUOTA = 1_000_000;

describe('organization limits in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    await server.runtime.accounts.createOwner({
      organization: 'org-capped',
      email: 'kim@example.com',
      password: PASSWORD,
      allowedTiers: ['Free'],
    });
    await server.runtime.organizations.setPlan('org-capped', 'Free', { storageQuotaBytes: QUOTA }, CLI_ACTOR);
    for (let index = 0; index < 10; index++)
      await server.runtime.keys.create({ organization: 'org-capped', tier: 'Free', name: `key ${index}` });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.origin}/dashboard/sign-in?next=${encodeURIComponent('/dashboard/keys')}`);
    await page.getByLabel('Email').fill('kim@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/keys$/);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the keys page shows 10 of 10 active keys and the create form shows the refusal', async () => {
    const keys = page.getByTestId('limits-keys');
    await keys.waitFor();
    assert.equal((await keys.textContent())?.trim(), '10 of 10 active');
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Name').fill('one too many');
    await form.getByRole('button', { name: 'Create key' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent())!, /10 active API keys, the most its plan \(Free\) allows \(10\)/);
    assert.equal(await page.getByRole('row').filter({ hasText: 'one too many' }).count(), 0);
  });

  test('revoking a key from the page brings the count down', async () => {
    await page.getByRole('button', { name: 'Revoke key 3' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('limits-keys').filter({ hasText: '9 of 10 active' }).waitFor();
  });

  test('the files page shows storage against the quota, refreshed after an upload; past the quota the upload is refused', async () => {
    await page.getByRole('link', { name: 'Files' }).click();
    const storage = page.getByTestId('limits-storage');
    await storage.waitFor();
    assert.equal((await storage.textContent())?.trim(), '0 bytes of 1.0 MB used');
    const form = page.getByRole('form', { name: 'Upload a file' });
    await form.getByLabel('File').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.alloc(600_000, 0x61) });
    await form.getByLabel('Purpose').selectOption('user_data');
    await form.getByRole('button', { name: 'Upload' }).click();
    await form.getByRole('status').waitFor();
    await page.getByTestId('limits-storage').filter({ hasText: '600 KB of 1.0 MB used' }).waitFor();

    await form.getByLabel('File').setInputFiles({ name: 'more.txt', mimeType: 'text/plain', buffer: Buffer.alloc(500_000, 0x62) });
    await form.getByRole('button', { name: 'Upload' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent())!, /exceed your organization's storage quota of 1000000 bytes/);
    assert.equal((await page.getByTestId('limits-storage').textContent())?.trim(), '600 KB of 1.0 MB used');
  });

  test("the operator's organization page shows both figures and its plan form sets the cap and the quota", async () => {
    const operator = await server.runtime.people.createOperator('ops@switchyard.test', server.origin);
    const operatorPage = await browser.context
      .browser()!
      .newContext()
      .then((context) => context.newPage());
    operatorPage.on('pageerror', (error) => pageErrors.push(error.message));
    await operatorPage.goto(`${server.origin}/dashboard/set-password#${operator.link.split('#')[1]}`);
    await operatorPage.getByLabel('New password').fill(PASSWORD);
    await operatorPage.getByLabel('Repeat it').fill(PASSWORD);
    await operatorPage.keyboard.press('Enter');
    await operatorPage.waitForURL(/\/dashboard\/operator\/organizations$/);
    await operatorPage.goto(`${server.origin}/dashboard/operator/organizations/org-capped`);
    await operatorPage.getByTestId('limits-keys').filter({ hasText: '9 of 10 active' }).waitFor();
    assert.equal((await operatorPage.getByTestId('limits-storage').textContent())?.trim(), '600 KB of 1.0 MB used');

    const plan = operatorPage.getByRole('form', { name: 'Change the plan' });
    await plan.getByLabel('Active API keys').fill('25');
    await plan.getByLabel('Storage quota (bytes)').fill('2000000');
    await plan.getByRole('button', { name: 'Save plan' }).click();
    await operatorPage.getByTestId('limits-keys').filter({ hasText: '9 of 25 active' }).waitFor();
    await operatorPage.getByTestId('limits-storage').filter({ hasText: '600 KB of 2.0 MB used' }).waitFor();
    const effective = await server.runtime.organizations.planOf('org-capped');
    assert.equal(effective?.maxActiveKeys, 25);
    assert.equal(effective?.storageQuotaBytes, 2_000_000);
    await operatorPage.goto(`${server.origin}/dashboard/operator/organizations`);
    await operatorPage.getByRole('row').filter({ hasText: 'org-capped' }).filter({ hasText: '9 of 25' }).waitFor();
    await operatorPage.goto(`${server.origin}/dashboard/operator/plans`);
    const free = operatorPage.getByRole('row').filter({ hasText: 'Free' });
    await free.waitFor();
    assert.match((await free.textContent())!, /10.*105 MB/);
    assert.deepEqual(pageErrors, []);
  });
});
