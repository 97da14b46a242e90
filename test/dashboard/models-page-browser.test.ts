// The dashboard's Models page in Chromium (Debian's, headless, playwright-core) against a real server:
// each model's resolved price card, read from the maintained list or written by the operator.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type LaunchedBrowser } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';

describe('the Models page shows each resolved price card', { skip: !chromiumAvailable() }, () => {
  let server: TestServer;
  let browser: LaunchedBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer({
      config: {
        providers: {
          anthropic: { kind: 'anthropic', baseUrl: 'http://127.0.0.1:9' },
          openai: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
        },
        models: [
          {
            id: 'claude-listed',
            provider: 'anthropic',
            capabilities: ['chat'],
            pricing: { from: 'genai-prices', provider: 'anthropic', model: 'claude-sonnet-4-5', outputPerMillion: 14 },
          },
          {
            id: 'dall-e-priced',
            provider: 'openai',
            capabilities: ['image_generation'],
            imageSizes: ['1024x1024'],
            pricing: { perImage: { '1024x1024': 0.04, '1024x1024/hd': 0.08 }, perRequest: 0.001, batchFactor: 0.25 },
          },
        ],
      },
    });
    await server.runtime.accounts.createOwner({ organization: 'org-models', email: 'mo@example.com', password: PASSWORD });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.origin}/dashboard/sign-in?next=${encodeURIComponent('/dashboard/models')}`);
    await page.getByLabel('Email').fill('mo@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/models$/);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('token prices as they apply, long-context prices, per-image and per-request prices, the batch factor, the list', async () => {
    const table = page.getByRole('table', { name: 'Models' });
    const listed = table.getByRole('row').filter({ hasText: 'claude-listed' });
    await listed.waitFor();
    const card = (await listed.textContent())!;
    const input = server.config.models.find((model) => model.id === 'claude-listed')!.pricing.inputPerMillion;
    assert.match(
      card,
      new RegExp(
        `input \\$${input} · cached \\$${Number((input * 0.1).toFixed(6))} · cache write 5 min \\$${input * 1.25} / 1 h \\$${input * 2} · output \\$14`,
      ),
    );
    assert.match(card, /prompts above 200,000 tokens: input \$/);
    assert.match(card, /batch 50% of the price · from genai-prices \d+\.\d+\.\d+ \(anthropic \/ claude-sonnet-4-5\)/);
    const images = (await table.getByRole('row').filter({ hasText: 'dall-e-priced' }).textContent())!;
    assert.match(images, /\$0\.001 per request/);
    assert.match(images, /per image: 1024x1024 \$0\.04 · 1024x1024\/hd \$0\.08/);
    assert.match(images, /batch 25% of the price/);
    assert.doesNotMatch(images, /from genai-prices/);
    assert.deepEqual(pageErrors, []);
  });
});
