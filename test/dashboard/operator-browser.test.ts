// The operator console and people management in a real browser (Debian's Chromium, headless,
// playwright-core) against a real server whose mail goes to a real SMTP server started here
// (smtp-server): an operator sets a password through a link, finds an organization, moves it to
// another plan (the new limits show in /v1/auth/key), gives it a custom plan of 60,000 requests per
// batch (a 55,000-line batch is accepted for it only), suspends it (its SDK calls fail with the
// suspension error while another organization's go on, its owner sees a banner) and reactivates it.
// An owner invites a member by email (listed as invited, sent again), the member signs in through the
// newer mailed link, is made read-only, then removed, and their open session is refused at once; an
// invitation to an address with an account elsewhere is listed like any other and revoked. A key
// outside the plan cannot be created.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { eventually } from '../support/dashboard-client.ts';
import { startMailServer, type ReceivedMail } from '../support/mail-server.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
const available = chromiumAvailable();

function linkIn(mail: ReceivedMail): string {
  const match = /(http:\/\/\S+\/dashboard\/set-password#token=[A-Za-z0-9]+)/.exec(mail.text);
  assert.ok(match, `no link in the mail:\n${mail.text}`);
  return match[1]!;
}

async function signIn(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.keyboard.press('Enter');
}

async function keyStatus(server: TestServer, key: string): Promise<any> {
  const response = await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key}` } });
  return response.json();
}

function batchFile(lines: number): string {
  const line = (index: number) =>
    JSON.stringify({
      custom_id: `r${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'switchyard-echo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
  return Array.from({ length: lines }, (_value, index) => line(index)).join('\n');
}

describe('operator console in Chromium', { skip: !available }, () => {
  let server: TestServer;
  let mail: Awaited<ReturnType<typeof startMailServer>>;
  let operatorBrowser: LaunchedBrowser;
  let ownerBrowser: LaunchedBrowser;
  let operatorPage: Page;
  let ownerPage: Page;
  let acme: { key: string; id: string };
  let other: { key: string; id: string };
  const pageErrors: string[] = [];

  before(async () => {
    mail = await startMailServer();
    server = await startTestServer({
      config: { smtp: { url: `smtp://127.0.0.1:${mail.port}`, from: 'Switchyard <ops@switchyard.test>' } },
    });
    acme = await server.createKey({ organization: 'org-acme', tier: 'Developer' });
    other = await server.createKey({ organization: 'org-other', tier: 'Developer' });
    await server.runtime.accounts.createOwner({ organization: 'org-acme', email: 'owner@acme.example', password: PASSWORD });
    operatorBrowser = await launchChromium();
    ownerBrowser = await launchChromium();
    operatorPage = await operatorBrowser.context.newPage();
    ownerPage = await ownerBrowser.context.newPage();
    for (const page of [operatorPage, ownerPage]) page.on('pageerror', (error) => pageErrors.push(error.message));
  });
  after(async () => {
    await operatorBrowser?.close();
    await ownerBrowser?.close();
    await server?.close();
    await mail?.close();
  });

  test('an operator sets a password through the mailed link, finds an organization and moves it to another plan', async () => {
    const issued = await server.runtime.people.createOperator('ops@switchyard.test', server.origin);
    assert.equal(issued.delivery, 'sent');
    const received = mail.mails.find((item) => item.to.includes('ops@switchyard.test'))!;
    await operatorPage.goto(linkIn(received));
    await operatorPage.getByLabel('New password').fill(PASSWORD);
    await operatorPage.getByLabel('Repeat it').fill(PASSWORD);
    await operatorPage.keyboard.press('Enter');
    await operatorPage.waitForURL(/\/dashboard\/operator\/organizations$/);
    await operatorPage.getByLabel('Search').fill('acme');
    await operatorPage.getByRole('button', { name: 'Search' }).click();
    const table = operatorPage.getByRole('table', { name: 'Organizations' });
    await table.getByRole('link', { name: 'org-acme' }).waitFor();
    // The unfiltered list may still be on screen for a moment: wait for the search's answer.
    await table.getByRole('link', { name: 'org-other' }).waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await table.getByRole('link', { name: 'org-other' }).count(), 0);
    await table.getByRole('link', { name: 'org-acme' }).click();
    await operatorPage.waitForURL(/\/organizations\/org-acme$/);
    await operatorPage.getByRole('combobox', { name: 'Plan' }).selectOption('Production');
    await operatorPage.getByRole('button', { name: 'Save plan' }).click();
    await operatorPage.getByRole('heading', { name: 'Limits now: Production' }).waitFor();
    const production = server.config.tiers['Production']!;
    const status = await eventually(async () => {
      const current = await keyStatus(server, acme.key);
      return current.usage_info.daily.limit === production.tokensPerDay ? current : undefined;
    }, 30);
    assert.equal(status.usage_info.monthly.limit, production.tokensPerMonth);
    assert.equal((await keyStatus(server, other.key)).usage_info.daily.limit, server.config.tiers['Developer']!.tokensPerDay);
  });

  test('a custom plan of 60,000 requests per batch accepts a 55,000-line batch for that organization only', async () => {
    await operatorPage.getByLabel('Requests per batch').fill('60000');
    await operatorPage.getByRole('button', { name: 'Save plan' }).click();
    await operatorPage.getByRole('heading', { name: 'Limits now: Production (custom)' }).waitFor();
    const content = batchFile(55_000);
    const run = async (key: string) => {
      const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
      const file = await client.files.create({ file: await toFile(Buffer.from(content), 'big.jsonl'), purpose: 'batch' });
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const settled = await eventually(
        async () => {
          const current = await client.batches.retrieve(batch.id);
          return current.status === 'validating' ? undefined : current;
        },
        600,
        200,
      );
      return { client, batch: settled };
    };
    const [accepted, refused] = await Promise.all([run(acme.key), run(other.key)]);
    assert.equal(accepted.batch.status, 'in_progress', JSON.stringify(accepted.batch.errors));
    assert.equal(accepted.batch.request_counts?.total, 55_000);
    await accepted.client.batches.cancel(accepted.batch.id);
    assert.equal(refused.batch.status, 'failed');
    assert.match(refused.batch.errors!.data![0]!.message!, /more than 50000 requests/);
  });

  test("a suspended organization's SDK calls fail with the suspension error while another's go on; its owner sees a banner", async () => {
    await operatorPage.getByRole('button', { name: 'Suspend' }).click();
    await operatorPage.getByRole('button', { name: 'Yes, suspend' }).click();
    await operatorPage.getByRole('heading', { name: /Status: suspended/ }).waitFor();
    const acmeClient = new OpenAI({ apiKey: acme.key, baseURL: server.baseUrl, maxRetries: 0 });
    const otherClient = new OpenAI({ apiKey: other.key, baseURL: server.baseUrl, maxRetries: 0 });
    const chat = (client: OpenAI) =>
      client.chat.completions.create({ model: 'switchyard-echo', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] });
    const failure = await eventually(async () => {
      try {
        await chat(acmeClient);
        return undefined;
      } catch (error) {
        return error as InstanceType<typeof OpenAI.APIError>;
      }
    }, 30);
    assert.ok(failure instanceof OpenAI.PermissionDeniedError);
    assert.match(failure.message, /org-acme is suspended/);
    assert.ok((await chat(otherClient)).choices[0]!.message.content, "another organization's work goes on");

    await signIn(ownerPage, server.origin, 'owner@acme.example');
    await ownerPage.waitForURL(/\/dashboard\/keys$/);
    await ownerPage.getByRole('alert').filter({ hasText: 'org-acme is suspended' }).waitFor();

    await operatorPage.getByRole('button', { name: 'Reactivate' }).click();
    await operatorPage.getByRole('button', { name: 'Yes, reactivate' }).click();
    await operatorPage.getByRole('heading', { name: /Status: active/ }).waitFor();
    await eventually(async () => {
      try {
        return (await chat(acmeClient)).choices.length > 0 ? true : undefined;
      } catch {
        return undefined;
      }
    }, 30);
  });

  test('an owner invites a member by email; the member signs in through the link, is made read-only, then removed and refused at once', async () => {
    await ownerPage.reload();
    await ownerPage.getByRole('link', { name: 'People' }).click();
    await ownerPage.getByLabel('Email').fill('member@acme.example');
    await ownerPage.getByLabel('Role').selectOption('owner');
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.getByText('Invitation mailed to member@acme.example.').waitFor();
    const first = await eventually(async () => mail.mails.find((item) => item.to.includes('member@acme.example')));
    assert.match(first.text, /invited you to the organization org-acme/);
    // The pending invitation is listed; sending it again mails a new link (the first one stops working).
    const pending = ownerPage.getByRole('row').filter({ hasText: 'member@acme.example' });
    await pending.getByText('invited').waitFor();
    await pending.getByRole('button', { name: 'Send again' }).click();
    const invitation = await eventually(async () => {
      const sent = mail.mails.filter((item) => item.to.includes('member@acme.example'));
      return sent.length === 2 ? sent[1] : undefined;
    });
    assert.notEqual(linkIn(invitation), linkIn(first));

    // The member, in the operator's browser after the operator signs out.
    await operatorPage.getByRole('button', { name: 'Sign out' }).click();
    await operatorPage.waitForURL(/\/dashboard\/sign-in/);
    await operatorPage.goto(linkIn(invitation));
    await operatorPage.getByLabel('New password').fill(PASSWORD);
    await operatorPage.getByLabel('Repeat it').fill(PASSWORD);
    await operatorPage.keyboard.press('Enter');
    await operatorPage.waitForURL(/\/dashboard\/keys$/);
    await operatorPage.getByRole('button', { name: 'Create key' }).waitFor();

    await ownerPage.reload();
    const row = ownerPage.getByRole('row').filter({ hasText: 'member@acme.example' });
    await row.getByRole('button', { name: 'Make read-only' }).click();
    await row.getByText('read-only member').waitFor();
    await operatorPage.reload();
    await operatorPage.getByText('Members can see keys; an owner creates them.').waitFor();

    await row.getByRole('button', { name: 'Remove' }).click();
    await row.getByRole('button', { name: 'Yes, remove' }).click();
    await row.waitFor({ state: 'detached' });
    // The member's open page: the next request with their cookie is refused, back to sign-in.
    await operatorPage.getByRole('link', { name: 'Usage' }).click();
    await operatorPage.waitForURL(/\/dashboard\/sign-in/);
  });

  test('an invitation to an address with an account elsewhere is listed like any other, and revoked', async () => {
    await ownerPage.getByRole('link', { name: 'People' }).click();
    await ownerPage.getByLabel('Email').fill('ops@switchyard.test');
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.getByText('Invitation mailed to ops@switchyard.test.').waitFor();
    const row = ownerPage.getByRole('row').filter({ hasText: 'ops@switchyard.test' });
    await row.getByText('invited').waitFor();
    await row.getByRole('button', { name: 'Send again' }).waitFor();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await server.runtime.accounts.findOwnerByEmail('ops@switchyard.test'))?.role, 'operator');
    assert.deepEqual(pageErrors, []);
  });

  test('a key with a permission outside the plan cannot be created', async () => {
    await server.runtime.organizations.setPlan('org-acme', 'Free', null, { email: 'test', address: null });
    await ownerPage.getByRole('link', { name: 'Keys' }).click();
    await ownerPage.getByLabel('Name').fill('wants batches');
    await ownerPage.getByRole('checkbox', { name: 'batches' }).check();
    await ownerPage.getByRole('button', { name: 'Create key' }).click();
    await ownerPage.getByRole('alert').filter({ hasText: 'does not allow the permission(s) batches' }).waitFor();
    assert.equal(await ownerPage.getByRole('row').filter({ hasText: 'wants batches' }).count(), 0);
    assert.deepEqual(pageErrors, []);
  });
});
