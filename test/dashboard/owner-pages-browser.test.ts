// The owner pages of issue 31 in Chromium (Debian's, headless, playwright-core) against a real server:
// rename and rotate a key through the page's own dialogs (the old row says "replaced, expires in N
// min"), "Load more" and search on the keys list, the audit log naming keys, a file uploaded from the
// page with its size as people read it, usage per key with the organization's limits stated once, and
// every list page at phone width (390 px) with nothing scrolling sideways.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { eventually } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

async function signIn(page: Page, origin: string, next = '/dashboard/keys'): Promise<void> {
  await page.goto(`${origin}/dashboard/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill('pat@example.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp(`${next}$`));
}

describe('owner pages in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    await server.runtime.accounts.createOwner({ organization: 'org-pages', email: 'pat@example.com', password: PASSWORD });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signIn(page, server.origin);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('rename a key and rotate it through dialogs; the old row says it was replaced and when it stops', async () => {
    await server.runtime.keys.create({ organization: 'org-pages', tier: 'Developer', name: 'ci runner' });
    await page.reload();
    await page.getByRole('button', { name: 'Edit ci runner' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit ci runner' });
    await edit.getByLabel('Name').fill('build runner');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row').filter({ hasText: 'build runner' }).waitFor();
    assert.equal(await page.getByRole('dialog').count(), 0, 'the dialog closes');

    await page.getByRole('button', { name: 'Rotate build runner' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate build runner' });
    await rotate.getByLabel('Grace period (minutes)').fill('30');
    await rotate.getByRole('button', { name: 'Rotate' }).click();
    await page.getByTestId('new-key').waitFor();
    const replaced = page.getByText(/^replaced, expires in (29|30) min$/);
    await replaced.waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: 'build runner' }).count(), 2, 'the new key and the old one');

    // A cancelled dialog changes nothing.
    await page.getByRole('button', { name: 'Revoke build runner' }).first().click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await page.getByText('revoked', { exact: true }).count(), 0);
  });

  test('the audit log names keys as the keys page does', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    const rotated = page.getByRole('row').filter({ hasText: 'key.rotated' });
    await rotated.waitFor();
    assert.match((await rotated.textContent())!, /build runner \(sk-sy-[^)]+\) -> build runner \(sk-sy-/);
    assert.doesNotMatch((await rotated.textContent())!, /key_[A-Za-z0-9]{16}/);
  });

  test('keys beyond the first page come with "Load more"; search finds one', async () => {
    for (let index = 0; index < 55; index++)
      await server.runtime.keys.create({ organization: 'org-pages', tier: 'Developer', name: `fleet ${String(index).padStart(2, '0')}` });
    await page.getByRole('link', { name: 'Keys' }).click();
    const rows = page.getByRole('table', { name: 'API keys' }).locator('tbody tr');
    await eventually(async () => ((await rows.count()) === 50 ? true : undefined), 50, 200);
    await page.getByRole('button', { name: 'Load more keys' }).click();
    await eventually(async () => ((await rows.count()) === 57 ? true : undefined), 50, 200);
    assert.equal(await page.getByRole('button', { name: 'Load more keys' }).count(), 0, 'nothing more to load');

    await page.getByRole('searchbox', { name: 'Search keys' }).fill('fleet 07');
    await page.getByRole('search', { name: 'Search keys' }).getByRole('button', { name: 'Search' }).click();
    await eventually(async () => ((await rows.count()) === 1 ? true : undefined), 50, 200);
    assert.match((await rows.first().textContent())!, /fleet 07/);
  });

  test('a file uploaded from the page is listed with its size as people read it and its expiry; deleting asks first', async () => {
    await page.getByRole('link', { name: 'Files' }).click();
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.alloc(2_500, 'a') });
    await page.getByLabel('Purpose').selectOption('user_data');
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('status').filter({ hasText: 'Uploaded notes.txt (2.5 KB)' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'notes.txt' });
    await row.getByText('2.5 KB').waitFor();
    assert.match((await row.textContent())!, /never/);
    await row.getByRole('button', { name: 'Delete notes.txt' }).click();
    await page.getByRole('dialog', { name: 'Delete notes.txt?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No files.').waitFor();
  });

  test("usage per key and per model, with the organization's limits stated once", async () => {
    const key = await server.runtime.keys.create({ organization: 'org-pages', tier: 'Developer', name: 'usage probe' });
    const client = new OpenAI({ apiKey: key.key, baseURL: server.baseUrl, maxRetries: 0 });
    await client.chat.completions.create({ model: 'switchyard-echo', max_tokens: 20, messages: [{ role: 'user', content: 'per key' }] });
    await page.getByRole('link', { name: 'Usage' }).click();
    await eventually(
      async () => {
        await page.reload();
        await page.getByRole('table', { name: 'Usage per key' }).waitFor();
        return (await page.getByRole('table', { name: 'Usage per key' }).getByText('usage probe').count()) > 0 ? true : undefined;
      },
      30,
      300,
    );
    await page.getByRole('table', { name: 'Usage per model' }).getByRole('cell', { name: 'switchyard-echo' }).waitFor();
    assert.equal(await page.getByTestId('limits-rule').count(), 1, 'the rule is stated once');
    assert.match((await page.getByTestId('limits-rule').textContent())!, /organization's plan, shared by all its keys/);
    await page.getByRole('heading', { name: /Limits of org-pages: \w+ plan/ }).waitFor();
  });

  test('at phone width (390 px) no list page scrolls sideways', async () => {
    const phone = await launchChromium({ width: 390, height: 844 });
    try {
      const phonePage = await phone.context.newPage();
      phonePage.on('pageerror', (error) => pageErrors.push(error.message));
      await signIn(phonePage, server.origin);
      for (const [path, table] of [
        ['/dashboard/keys', 'API keys'],
        ['/dashboard/usage', 'Usage per key'],
        ['/dashboard/batches', 'Batches'],
        ['/dashboard/files', 'Files'],
        ['/dashboard/models', 'Models'],
        ['/dashboard/audit', 'Audit log'],
        ['/dashboard/people', 'People of the organization'],
      ] as const) {
        await phonePage.goto(`${server.origin}${path}`);
        await phonePage.getByRole('table', { name: table }).waitFor();
        const overflow = await phonePage.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        const widest = await phonePage.evaluate<string>(
          "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 5).map((e) => e.tagName + '.' + e.className + ':' + Math.round(e.getBoundingClientRect().right)).join(' ')",
        );
        assert.ok(overflow <= 0, `${path} is ${overflow}px wider than the screen (${widest})`);
      }
    } finally {
      await phone.close();
    }
    assert.deepEqual(pageErrors, []);
  });
});
