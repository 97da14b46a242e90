// The operator area's service-wide pages in Chromium: Plans (the configured tiers with how many
// organizations are on each), Fleet (this instance alive from its heartbeat row, the routed deployments
// table) and the operators' audit log (newest first, paged back with "Older"), each also at phone width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CLI_ACTOR } from '../../src/accounts/organizations.ts';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { eventually } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

/** Signs the operator in through their set-password link (no SMTP: the link is handed back). */
async function signInOperator(page: Page, server: TestServer, link: string): Promise<void> {
  await page.goto(`${server.origin}/dashboard/set-password#${link.split('#')[1]}`);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat it').fill(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/dashboard\/operator\/organizations$/);
}

describe('operator service pages in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    await server.createKey({ organization: 'org-ops-a', tier: 'Developer' });
    await server.createKey({ organization: 'org-ops-b', tier: 'Developer' });
    await server.runtime.organizations.setPlan('org-ops-a', 'Production', null, CLI_ACTOR);
    const operator = await server.runtime.people.createOperator('ops@switchyard.test', server.origin);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signInOperator(page, server, operator.link);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('Plans lists every configured tier with how many organizations are on it', async () => {
    await page.getByRole('link', { name: 'Plans' }).click();
    const table = page.getByRole('table', { name: 'Plans' });
    await table.waitFor();
    const tiers = Object.keys(server.runtime.config.tiers);
    assert.equal(await table.locator('tbody tr').count(), tiers.length);
    const counts = await server.runtime.organizations.countsByPlan();
    for (const tier of ['Production', 'Developer']) {
      const row = table.getByRole('row').filter({ has: page.getByText(new RegExp(`^${tier}( \\(default\\))?$`)) });
      assert.equal((await row.locator('td').nth(1).textContent())!.replace(/^Organizations/, '').trim(), String(counts.get(tier) ?? 0));
    }
    assert.equal(counts.get('Production'), 1);
    assert.equal(await page.title(), 'Plans · Switchyard');
  });

  test('Fleet shows this instance alive and the routed deployments table', async () => {
    await page.getByRole('link', { name: 'Fleet' }).click();
    const instances = page.getByRole('table', { name: 'Instances' });
    await eventually(async () => ((await instances.locator('tbody tr code').count()) >= 1 ? true : undefined), 50, 200);
    // The instance ids the fleet API answers with (this server's heartbeat row among them).
    const fleet = await page.evaluate<string[]>(
      "fetch('/dashboard/api/operator/fleet').then((response) => response.json()).then((body) => body.instances.map((row) => row.id))",
    );
    assert.ok(fleet.length >= 1);
    await instances.getByText(fleet[0]!, { exact: true }).waitFor();
    await page.getByRole('table', { name: 'Deployments' }).waitFor();
  });

  test('the operator audit log shows changes newest first and pages back with "Older"', async () => {
    for (let index = 0; index < 55; index++)
      await server.runtime.organizations.audit(CLI_ACTOR, 'test.note', 'org-ops-b', `note ${index}`, { index });
    await page.getByRole('link', { name: 'Operator audit log' }).click();
    const rows = page.getByRole('table', { name: 'Operator audit log' }).locator('tbody tr');
    await eventually(async () => ((await rows.count()) === 50 ? true : undefined), 50, 200);
    assert.match((await rows.first().textContent())!, /note 54/);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByRole('row').filter({ hasText: 'organization.plan_changed' }).waitFor();
    assert.match((await rows.first().textContent())!, /note 4(?!\d)/);
    await page.getByRole('button', { name: 'Newest' }).click();
    await page.getByRole('row').filter({ hasText: 'note 54' }).waitFor();
  });

  test('the operator pages fit a phone screen (390 px)', async () => {
    const phone = await launchChromium({ width: 390, height: 844 });
    try {
      const phonePage = await phone.context.newPage();
      phonePage.on('pageerror', (error) => pageErrors.push(error.message));
      const operator = await server.runtime.people.createOperator('ops2@switchyard.test', server.origin);
      await signInOperator(phonePage, server, operator.link);
      for (const [path, table] of [
        ['/dashboard/operator/organizations', 'Organizations'],
        ['/dashboard/operator/plans', 'Plans'],
        ['/dashboard/operator/fleet', 'Instances'],
        ['/dashboard/operator/audit', 'Operator audit log'],
      ] as const) {
        await phonePage.goto(`${server.origin}${path}`);
        await phonePage.getByRole('table', { name: table }).waitFor();
        const overflow = await phonePage.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        assert.ok(overflow <= 0, `${path} is ${overflow}px wider than the screen`);
      }
    } finally {
      await phone.close();
    }
    assert.deepEqual(pageErrors, []);
  });
});
