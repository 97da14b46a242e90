// The dashboard's rough edges from the second operator trial (issue 40 item 10), in Chromium against a
// real server: the operators' audit Detail is a readable diff, not raw JSON; recovery codes can be
// copied and downloaded; a batch whose input file was deleted shows no dead link; the usage chart has
// no $0-$100 cost axis when nothing cost anything; the Models page snippets use SWITCHYARD_KEY like
// the README.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { CLI_ACTOR } from '../../src/accounts/organizations.ts';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { until } from '../support/until.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

describe('operator-day dashboard edges in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let owner: Page;
  let client: OpenAI;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    const key = await server.createKey({ organization: 'org-day', tier: 'Developer' });
    client = new OpenAI({ apiKey: key.key, baseURL: server.baseUrl, maxRetries: 0 });
    await server.runtime.accounts.createOwner({ organization: 'org-day', email: 'day@example.com', password: PASSWORD });
    browser = await launchChromium();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
    owner = await browser.context.newPage();
    owner.on('pageerror', (error) => pageErrors.push(error.message));
    await owner.goto(`${server.origin}/dashboard/sign-in`);
    await owner.getByLabel('Email').fill('day@example.com');
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.keyboard.press('Enter');
    await owner.waitForURL(/\/dashboard\/keys$/);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the Models page snippets read the key from SWITCHYARD_KEY, as the README does', async () => {
    await owner.goto(`${server.origin}/dashboard/models`);
    const snippets = owner.locator('pre code');
    await snippets.first().waitFor();
    const text = (await snippets.allTextContents()).join('\n');
    assert.match(text, /\$SWITCHYARD_KEY/);
    assert.match(text, /process\.env\.SWITCHYARD_KEY/);
    assert.doesNotMatch(text, /SWITCHYARD_API_KEY/);
  });

  test('with no cost in the range the usage chart has no cost axis (no $0-$100 scale)', async () => {
    await client.chat.completions.create({ model: 'switchyard-echo', messages: [{ role: 'user', content: 'free of charge' }] });
    await owner.goto(`${server.origin}/dashboard/usage`);
    const caption = owner.locator('figure.chart figcaption');
    await caption.filter({ hasText: 'No cost in this range, so no cost axis.' }).waitFor();
    await owner.getByRole('img', { name: 'Tokens per day' }).waitFor();
    // uPlot's legend lists the series drawn: tokens only.
    const legend = await owner.locator('figure.chart .u-legend').textContent();
    assert.match(legend ?? '', /Tokens/);
    assert.doesNotMatch(legend ?? '', /Cost/);
  });

  test('a batch whose input file was deleted shows the id marked deleted, without a link', async () => {
    const line = JSON.stringify({
      custom_id: 'a',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'switchyard-echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    const input = await client.files.create({ file: await toFile(Buffer.from(`${line}\n`), 'day.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until(
      async () => ((await client.batches.retrieve(batch.id)).status === 'completed' ? true : undefined),
      'the batch to complete',
      120_000,
      200,
    );
    const facts = owner.locator('dl.facts');
    await owner.goto(`${server.origin}/dashboard/batches/${batch.id}`);
    await facts.getByRole('link', { name: input.id }).waitFor();
    await client.files.delete(input.id);
    await owner.reload();
    await facts.getByText(`${input.id} (deleted)`).waitFor();
    assert.equal(await facts.getByRole('link', { name: input.id }).count(), 0);
    // The output file is still there and still linked.
    const output = (await client.batches.retrieve(batch.id)).output_file_id!;
    await facts.getByRole('link', { name: output }).waitFor();
  });

  test('recovery codes can be copied and downloaded as a text file', async () => {
    await owner.goto(`${server.origin}/dashboard/account`);
    await owner.getByRole('button', { name: 'Set up an authenticator' }).click();
    const secret = (await owner.getByRole('form', { name: 'Confirm authenticator' }).locator('code').textContent())!.trim();
    const confirm = owner.getByRole('form', { name: 'Confirm authenticator' });
    await confirm.getByLabel('Code from the app').fill(new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate());
    await confirm.getByLabel('Current password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Turn on' }).click();
    const shown = owner.getByLabel('Recovery codes');
    await shown.locator('li code').first().waitFor();
    const codes = (await shown.locator('li code').allTextContents()).map((code) => code.trim());
    assert.equal(codes.length, 10);

    await owner.getByRole('button', { name: 'Copy the recovery codes' }).click();
    await owner.getByRole('button', { name: 'Copy the recovery codes' }).filter({ hasText: 'Copied' }).waitFor();
    assert.deepEqual((await owner.evaluate<string>('navigator.clipboard.readText()')).trim().split('\n'), codes);

    const downloading = owner.waitForEvent('download');
    await owner.getByRole('link', { name: 'Download the recovery codes' }).click();
    const download = await downloading;
    assert.equal(download.suggestedFilename(), 'switchyard-recovery-codes.txt');
    assert.deepEqual(
      readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\n'),
      codes,
    );
  });

  test('the operators’ audit Detail shows a plan change as one line per changed field', async () => {
    await server.runtime.organizations.setPlan('org-day', 'Production', { requestsPerMinute: 3 }, CLI_ACTOR);
    const operator = await server.runtime.people.createOperator('ops-day@example.com', server.origin);
    const page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.origin}/dashboard/set-password#${operator.link.split('#')[1]}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/operator\/organizations$/);
    await page.getByRole('link', { name: 'Operator audit log' }).click();
    const row = page.getByRole('row').filter({ hasText: 'organization.plan_changed' });
    await row.waitFor();
    const lines = (await row.locator('ul.audit-detail li').allTextContents()).map((line) => line.trim());
    assert.deepEqual(lines, ['plan: Developer → Production', 'overrides.requestsPerMinute: not set → 3', 'narrowed_keys: 0']);
    assert.doesNotMatch((await row.textContent())!, /[{}]/, 'no raw JSON');
    assert.deepEqual(pageErrors, []);
  });
});
