// The budgets pages in Chromium (Debian's, headless) against a real server (SQLite) whose model is
// served by a mock upstream: an operator sets an organization's budget in dollars and sees every
// organization's spend against its budget; an owner's key budget above the organization's is refused
// with the server's message, one within it is set; after a real request the owner sees spend,
// remaining and reset for the organization and per key, and the operator sees that spend too; a
// member sees the figures without the forms.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createOwner } from '../support/dashboard-client.ts';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();
/** 1 micro-USD per input token, 2 per output token. */
const PRICES = { inputPerMillion: 1, outputPerMillion: 2 };

async function signIn(page: Page, origin: string, email: string, next: string): Promise<void> {
  await page.goto(`${origin}/dashboard/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp(`${next}$`));
}

/** The page's text after reloading it until `text` shows (the page polls; a reload reads at once). */
async function reloadUntil(page: Page, locator: () => ReturnType<Page['locator']>, text: string): Promise<void> {
  await until(
    async () => {
      await page.reload();
      await locator().first().waitFor();
      return ((await locator().first().textContent()) ?? '').includes(text) ? true : undefined;
    },
    `the page shows ${text}`,
    60_000,
    500,
  );
}

const nextMonth = (): string => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
};
const tomorrow = (): string =>
  new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

describe('budgets pages in Chromium', { skip: !available }, () => {
  const upstream = new MockOpenAIServer();
  let server: TestServer;
  let browser: LaunchedBrowser;
  let second: LaunchedBrowser;
  let owner: Page;
  let operator: Page;
  let spender: { key: string; id: string };
  let idle: { key: string; id: string };
  const pageErrors: string[] = [];

  before(async () => {
    await upstream.start();
    server = await startTestServer({
      config: {
        providers: { up: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 } },
        models: [{ id: 'priced', provider: 'up', capabilities: ['chat'], maxOutputTokens: 4096, pricing: PRICES }],
      } as never,
    });
    await server.runtime.accounts.createOwner({ organization: 'org-shop', email: 'pat@shop.test', password: PASSWORD });
    await server.runtime.accounts.createOwner({ organization: 'org-else', email: 'eve@else.test', password: PASSWORD });
    await createOwner(server.runtime, 'org-shop', 'max@shop.test', PASSWORD, { role: 'member' });
    spender = await server.createKey({ organization: 'org-shop' });
    idle = await server.createKey({ organization: 'org-shop' });
    browser = await launchChromium();
    owner = await browser.context.newPage();
    owner.on('pageerror', (error) => pageErrors.push(error.message));
    await signIn(owner, server.origin, 'pat@shop.test', '/dashboard/keys');
    second = await launchChromium();
    operator = await second.context.newPage();
    operator.on('pageerror', (error) => pageErrors.push(error.message));
    const issued = await server.runtime.people.createOperator('ops@shop.test', server.origin);
    await operator.goto(`${server.origin}/dashboard/set-password#${issued.link.split('#')[1]}`);
    await operator.getByLabel('New password').fill(PASSWORD);
    await operator.getByLabel('Repeat it').fill(PASSWORD);
    await operator.keyboard.press('Enter');
    await operator.waitForURL(/\/dashboard\/operator\/organizations$/);
  });
  after(async () => {
    await browser?.close();
    await second?.close();
    await server?.close();
    await upstream.close();
  });

  const operatorRow = (organization: string) =>
    operator.getByRole('table', { name: 'Organization budgets' }).locator(`tr[data-organization="${organization}"]`);
  const keyRow = (id: string) => owner.getByRole('table', { name: 'Key budgets' }).locator(`tr[data-key-id="${id}"]`);

  test('an operator sets an organization budget in dollars', async () => {
    await operator.getByRole('link', { name: 'Budgets' }).click();
    await operator.getByRole('heading', { name: 'Budgets' }).waitFor();
    const row = operatorRow('org-shop');
    await row.getByText('No budget').waitFor();
    const form = operator.getByRole('form', { name: 'Budget of org-shop' });
    await form.getByLabel('Amount (USD)').fill('abc');
    await form.getByRole('button', { name: 'Set budget' }).click();
    await form.getByRole('alert').filter({ hasText: 'Enter an amount in dollars' }).waitFor();
    await form.getByLabel('Amount (USD)').fill('5');
    await form.getByLabel('per').selectOption('month');
    await form.getByRole('button', { name: 'Set budget' }).click();
    await operator.getByRole('status').filter({ hasText: 'Budget of org-shop set: $5.00 per month.' }).waitFor();
    await row.getByText('$0.00 of $5.00 per month').waitFor();
    assert.ok(((await row.textContent()) ?? '').includes(nextMonth()));
    assert.ok(((await operatorRow('org-else').textContent()) ?? '').includes('No budget'));
  });

  test('an owner is refused a key budget above the organization, sets one within it, and sees spend, remaining and reset', async () => {
    await owner.getByRole('link', { name: 'Budgets' }).click();
    await owner.getByRole('heading', { name: 'Budgets', exact: true }).waitFor();
    const card = owner.getByTestId('organization-budget');
    await card.locator('[data-field="limit"]').filter({ hasText: '$5.00 per month' }).waitFor();
    const form = keyRow(spender.id).getByRole('form');
    await form.getByLabel('Amount (USD)').fill('6.00');
    await form.getByLabel('per').selectOption('day');
    await form.getByRole('button', { name: 'Set budget' }).click();
    await owner.getByText("A key's budget cannot be above its organization's").waitFor();
    assert.ok(((await keyRow(spender.id).textContent()) ?? '').includes('—'), 'nothing set');
    await form.getByLabel('Amount (USD)').fill('2.50');
    await form.getByRole('button', { name: 'Set budget' }).click();
    await owner.getByRole('status').filter({ hasText: 'set: $2.50 per day.' }).waitFor();
    await keyRow(spender.id).getByText('$2.50 per day').waitFor();

    // A real request on the key: 10 prompt tokens x 1 + 100 output tokens x 2 = 210 micro-USD.
    upstream.reset();
    upstream.enqueue({ type: 'reply', reply: { text: 'ok', usage: { prompt_tokens: 10, completion_tokens: 100 } } });
    const chat = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${spender.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', max_tokens: 100, messages: [{ role: 'user', content: 'Hello there, how are you?' }] }),
    });
    assert.equal(chat.status, 200, await chat.text());

    await reloadUntil(owner, () => owner.getByTestId('organization-budget').locator('[data-field="spent"]'), '$0.00021');
    assert.equal(await card.locator('[data-field="remaining"]').textContent(), '$4.99979');
    assert.equal(await card.locator('[data-field="reset"]').textContent(), nextMonth());
    const cells = await keyRow(spender.id).locator('td').allTextContents();
    assert.ok(cells.includes('$0.00021'), cells.join(' | '));
    assert.ok(cells.includes('$2.49979'), cells.join(' | '));
    assert.ok(cells.includes(tomorrow()), cells.join(' | '));
    // The other key has no budget of its own.
    assert.deepEqual((await keyRow(idle.id).locator('td').allTextContents()).slice(2, 6), ['—', '—', '—', '—']);
  });

  test('a member at phone width (390 px) sees the figures without the forms, and nothing scrolls sideways', async () => {
    const phone = await launchChromium({ width: 390, height: 844 });
    try {
      const page = await phone.context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await signIn(page, server.origin, 'max@shop.test', '/dashboard/budgets');
      await page.getByTestId('organization-budget').locator('[data-field="spent"]').filter({ hasText: '$0.00021' }).waitFor();
      await page
        .getByRole('table', { name: 'Key budgets' })
        .locator(`tr[data-key-id="${spender.id}"]`)
        .getByText('$2.50 per day')
        .waitFor();
      assert.equal(await page.getByRole('button', { name: 'Set budget' }).count(), 0, 'members cannot change budgets');
      await page.getByText('Only owners can change them.').waitFor();
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.ok(overflow <= 0, `the budgets page is ${overflow}px wider than the screen`);
      // An owner's page, with a form on every key, fits too.
      const ownerPhone = await phone.context.newPage();
      ownerPhone.on('pageerror', (error) => pageErrors.push(error.message));
      await page.getByRole('button', { name: 'Sign out' }).first().click();
      await signIn(ownerPhone, server.origin, 'pat@shop.test', '/dashboard/budgets');
      await ownerPhone.getByRole('button', { name: 'Set budget' }).first().waitFor();
      const ownerOverflow = await ownerPhone.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      assert.ok(ownerOverflow <= 0, `the owner's budgets page is ${ownerOverflow}px wider than the screen`);
    } finally {
      await phone.close();
    }
  });

  test('the operator sees the organization spend against its budget, and clears the override', async () => {
    await reloadUntil(operator, () => operatorRow('org-shop'), '$0.00021 of $5.00 per month');
    assert.ok(((await operatorRow('org-shop').textContent()) ?? '').includes('$4.99979'));
    await operatorRow('org-shop').getByRole('button', { name: 'Clear' }).click();
    await operator.getByRole('status').filter({ hasText: 'Override of org-shop cleared' }).waitFor();
    await operatorRow('org-shop').getByText('No budget').waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
