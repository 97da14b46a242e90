/**
 * Regenerates the README's dashboard screenshots (docs/images/dashboard-keys.png and
 * dashboard-usage.png): a real server with sample keys and 30 days of sample usage, signed in through
 * Debian's Chromium. Run: node --import tsx scripts/dashboard-screenshots.ts
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/index.ts';
import { UsageLedgerRepository } from '../src/db/repositories/usage-ledger-repository.ts';
import { startRuntime, type Runtime } from '../src/runtime.ts';
import { launchChromium } from '../test/support/browser.ts';

const DAY = 86_400_000;
const output = join(process.cwd(), 'docs', 'images');
mkdirSync(output, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-screenshots-'));
const config = loadConfig({
  env: {},
  overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
});
async function seedThenRestart(): Promise<Runtime> {
  const seeding = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
  try {
    const organization = 'org-acme';
    await seeding.accounts.createOwner({
      organization,
      email: 'ada@acme.example',
      password: 'screenshot password',
      allowedTiers: ['Developer', 'Production'],
    });
    const production = await seeding.keys.create({ organization, name: 'production backend', tier: 'Production' });
    const staging = await seeding.keys.create({ organization, name: 'staging', tier: 'Developer', expiresInMs: 30 * DAY });
    const old = await seeding.keys.create({ organization, name: 'old laptop', tier: 'Developer' });
    await seeding.keys.revoke(old.record.id);
    const ledger = new UsageLedgerRepository(seeding.database.db);
    const now = Date.now();
    const records = [];
    for (let day = 29; day >= 0; day--) {
      for (const [model, scale, price] of [
        ['gpt-4o-mini', 1, 0.6],
        ['claude-sonnet', 0.4, 15],
        ['switchyard-echo', 0.2, 0],
      ] as const) {
        const requests = Math.round((20 + 12 * Math.sin(day / 3) + (29 - day)) * scale) + 1;
        for (let request = 0; request < requests; request++) {
          const inputTokens = 400 + ((day * 37 + request * 11) % 300);
          const outputTokens = 120 + ((day * 13 + request * 7) % 200);
          records.push({
            requestId: `req-${day}-${model}-${request}`,
            organizationId: organization,
            keyId: request % 3 === 0 ? staging.record.id : production.record.id,
            model,
            endpoint: '/v1/chat/completions',
            inputTokens,
            outputTokens,
            cachedTokens: 0,
            reasoningTokens: 0,
            costUsd: ((inputTokens + outputTokens) * price) / 1_000_000,
            batch: false,
            statusCode: 200,
            latencyMs: 300,
            // Today's rows stay on today's UTC date even just after midnight.
            createdAtMs: now - day * DAY - Math.min(60_000, Math.floor((now % DAY) / 2)),
          });
        }
      }
    }
    await ledger.insertMany(records);
  } finally {
    await seeding.close();
  }
  return startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
}

// The sample usage is written to the ledger by a first start; the second start restores today's and this
// month's counters from it, as a restarted single instance does, so the limit meters show it too.
const runtime = await seedThenRestart();
try {
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
  const browser = await launchChromium({ width: 1200, height: 900 });
  try {
    const page = await browser.context.newPage();
    await page.goto(`${origin}/dashboard/sign-in`);
    await page.getByLabel('Email').fill('ada@acme.example');
    await page.getByLabel('Password').fill('screenshot password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    await page.getByLabel('Name').fill('analytics job');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    await page.screenshot({ path: join(output, 'dashboard-keys.png'), fullPage: true });
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.locator('.uplot canvas').waitFor();
    await page.screenshot({ path: join(output, 'dashboard-usage.png'), fullPage: false });
  } finally {
    await browser.close();
  }
  console.log(`screenshots written to ${output}`);
} finally {
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}
