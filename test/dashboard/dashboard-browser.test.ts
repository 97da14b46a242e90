// The dashboard in a real browser (Debian's Chromium, headless, playwright-core) against a real
// server: sign in with the keyboard, create a key and use it with the official openai SDK, see the
// request on the usage page, revoke it and watch the SDK get 401, session expiry back to sign-in and
// back again, a CSRF-less POST refused, other organizations invisible, and a phone-width layout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { eventually, sdkFailureStatus } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

async function signIn(page: Page, email: string): Promise<void> {
  // Keyboard only: the fields are labelled and in tab order, Enter submits.
  await page.getByLabel('Email').focus();
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
}

describe('dashboard in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    await server.runtime.accounts.createOwner({ organization: 'org-web', email: 'web@example.com', password: PASSWORD });
    await server.runtime.accounts.createOwner({ organization: 'org-rival', email: 'rival@example.com', password: PASSWORD });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('sign in, create a key, use it with the openai SDK, see it in usage, revoke it and the SDK gets 401', async () => {
    await page.goto(`${server.origin}/dashboard/keys`);
    await page.waitForURL(/\/dashboard\/sign-in\?next=%2Fdashboard%2Fkeys/);
    await signIn(page, 'web@example.com');
    await page.waitForURL(/\/dashboard\/keys$/);
    await page.getByLabel('Name').fill('browser key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())!.trim();
    assert.match(secret, /^sk-sy-/);
    // The list updates without a reload.
    await page.locator('tr', { hasText: 'browser key' }).getByText('active').waitFor();

    const client = new OpenAI({ apiKey: secret, baseURL: server.baseUrl, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'switchyard-echo',
      max_tokens: 40,
      messages: [{ role: 'user', content: 'from the browser test' }],
    });
    const tokens = completion.usage!.prompt_tokens + completion.usage!.completion_tokens;

    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(/\/dashboard\/usage$/);
    await eventually(
      async () => {
        await page.reload();
        await page.getByRole('table', { name: 'Usage per day and model' }).waitFor();
        return (await page.getByRole('cell', { name: 'switchyard-echo' }).count()) > 0 ? true : undefined;
      },
      30,
      300,
    );
    assert.equal((await page.getByTestId('usage-today').textContent())!.replace(/,/g, ''), String(tokens));
    // The sentence reads as written (a formatter reflowing the template once joined "used" and "of").
    assert.match((await page.locator('.meter p').first().textContent())!, /^[\d,]+ tokens used of [\d,]+$/);
    assert.ok(await page.locator('.uplot canvas').count(), 'the uPlot chart is drawn');

    await page.getByRole('link', { name: 'Keys' }).click();
    // The confirmation is the page's own <dialog>, not window.confirm.
    await page.getByRole('button', { name: 'Revoke browser key' }).click();
    await page.getByRole('dialog', { name: 'Revoke browser key?' }).getByRole('button', { name: 'Revoke' }).click();
    await page.locator('tr', { hasText: 'browser key' }).getByText('revoked').waitFor();
    assert.equal(await sdkFailureStatus(client), 401);
  });

  test('a POST without the CSRF token is refused even from the signed-in page', async () => {
    const answer = await page.evaluate(async () => {
      const response = await fetch('/dashboard/api/keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'forged' }),
      });
      return { status: response.status, body: await response.json() };
    });
    assert.equal(answer.status, 401);
    assert.equal((answer.body as any).error.code, 'invalid_token');
  });

  test('an expired session returns to sign-in (session_expired) and then back where the owner was', async () => {
    await page.goto(`${server.origin}/dashboard/audit`);
    await page.getByRole('table', { name: 'Audit log' }).waitFor();
    await server.runtime.database.db
      .updateTable('dashboard_sessions')
      .set({ idle_expires_at: Date.now() - 1000 })
      .where('revoked_at', 'is', null)
      .execute();
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().includes('/dashboard/api/') && response.status() === 401),
      page.getByRole('link', { name: 'Usage' }).click(),
    ]);
    assert.equal(((await answer.json()) as any).error.code, 'session_expired');
    await page.waitForURL(/\/dashboard\/sign-in\?next=%2Fdashboard%2Fusage&reason=session_expired/);
    await page.getByText('Your session expired').waitFor();
    await signIn(page, 'web@example.com');
    await page.waitForURL(/\/dashboard\/usage$/);
  });

  test('another organization sees none of these keys, batches or files', async () => {
    // The owner's organization has a file, which its own dashboard lists.
    const webKey = await server.createKey({ organization: 'org-web' });
    const upload = new FormData();
    upload.append('purpose', 'user_data');
    upload.append('file', new Blob(['private notes']), 'web-notes.txt');
    assert.equal(
      (await fetch(`${server.baseUrl}/files`, { method: 'POST', headers: { authorization: `Bearer ${webKey.key}` }, body: upload })).status,
      200,
    );
    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByText('web-notes.txt').waitFor();

    const rival = await launchChromium();
    try {
      const rivalPage = await rival.context.newPage();
      await rivalPage.goto(`${server.origin}/dashboard/sign-in`);
      await signIn(rivalPage, 'rival@example.com');
      await rivalPage.waitForURL(/\/dashboard\/keys$/);
      await rivalPage.getByText('No keys yet.').waitFor();
      assert.equal(await rivalPage.getByText('browser key').count(), 0);
      await rivalPage.getByRole('link', { name: 'Batches' }).click();
      await rivalPage.getByText('No batches.').waitFor();
      await rivalPage.getByRole('link', { name: 'Files' }).click();
      await rivalPage.getByText('No files.').waitFor();
      assert.equal(await rivalPage.getByText('web-notes.txt').count(), 0);
    } finally {
      await rival.close();
    }
  });

  test('usable at phone width: nothing but tables scrolls sideways', async () => {
    const phone = await launchChromium({ width: 390, height: 844 });
    try {
      const phonePage = await phone.context.newPage();
      await phonePage.goto(`${server.origin}/dashboard/sign-in`);
      await signIn(phonePage, 'web@example.com');
      await phonePage.waitForURL(/\/dashboard\/keys$/);
      await phonePage.getByRole('table', { name: 'API keys' }).waitFor();
      const overflow = await phonePage.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    } finally {
      await phone.close();
    }
    assert.deepEqual(pageErrors, []);
  });
});
