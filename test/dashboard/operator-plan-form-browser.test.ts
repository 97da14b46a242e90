// The operator console's plan form in Chromium (issue 40 item 6): saving an organization's plan without
// touching the permission checkboxes stores no permissions override, whatever order the checkboxes
// come in (they follow the union of every tier's list, which for Developer is not Developer's order).
// Reproduced as in the trial: set a requests-per-minute override, save, clear it, save: the
// organization is back on its plain plan, with no override stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

describe('operator plan form in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    await server.createKey({ organization: 'org-plain', tier: 'Developer' });
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

  const stored = async () => (await server.runtime.organizations.get('org-plain')).overrides;
  /** Clicks "Save plan" and waits for the server's answer to the save. */
  const save = async () => {
    const answered = page.waitForResponse((response) => response.request().method() !== 'GET' && response.url().endsWith('/plan'));
    await page.getByRole('button', { name: 'Save plan' }).click();
    assert.equal((await answered).status(), 200);
  };

  test('the checkbox order differs from Developer’s own list (the case the old comparison got wrong)', async () => {
    await page.goto(`${server.origin}/dashboard/operator/organizations/org-plain`);
    await page.getByRole('heading', { name: 'Limits now: Developer' }).waitFor();
    const form = page.getByRole('form', { name: 'Change the plan' });
    const boxes = await form
      .getByRole('checkbox')
      .evaluateAll((inputs) =>
        inputs
          .filter((input) => (input as unknown as { checked: boolean }).checked)
          .map((input) => (input as unknown as { name: string }).name.replace(/^permission-/, '')),
      );
    const developer = server.runtime.config.tiers['Developer']!.permissions;
    assert.deepEqual([...boxes].sort(), [...developer].sort());
    assert.notDeepEqual(boxes, developer);
  });

  test('saving without changes stores no override', async () => {
    await save();
    assert.equal(await stored(), null);
    await page.getByRole('heading', { name: 'Limits now: Developer', exact: true }).waitFor();
  });

  test('an RPM override set, saved, cleared and saved leaves no override behind', async () => {
    await page.getByLabel('Requests per minute').fill('3');
    await save();
    await page.getByRole('heading', { name: 'Limits now: Developer (custom)' }).waitFor();
    assert.deepEqual(await stored(), { requestsPerMinute: 3 });
    await page.getByLabel('Requests per minute').fill('');
    await save();
    await page.getByRole('heading', { name: 'Limits now: Developer', exact: true }).waitFor();
    assert.equal(await stored(), null);
  });

  test('unticking a permission still stores the narrower list', async () => {
    await page.getByRole('checkbox', { name: 'models', exact: true }).uncheck();
    await save();
    await page.getByRole('heading', { name: 'Limits now: Developer (custom)' }).waitFor();
    const developer = server.runtime.config.tiers['Developer']!.permissions;
    assert.deepEqual([...((await stored())?.permissions ?? [])].sort(), developer.filter((name) => name !== 'models').sort());
    assert.deepEqual(pageErrors, []);
  });
});
