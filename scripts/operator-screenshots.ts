/**
 * Regenerates the README's operator-area screenshots (docs/images/operator-organizations.png and
 * operator-organization.png): a real server with a few sample organizations, keys, people and a
 * month of sample usage, an operator signed in through Debian's Chromium.
 * Run: node --import tsx scripts/operator-screenshots.ts
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { CLI_ACTOR } from '../src/accounts/organizations.ts';
import { loadConfig } from '../src/config/index.ts';
import { UsageLedgerRepository } from '../src/db/repositories/usage-ledger-repository.ts';
import { startRuntime } from '../src/runtime.ts';
import { launchChromium } from '../test/support/browser.ts';

const DAY = 86_400_000;
const PASSWORD = 'screenshot password';
const output = join(process.cwd(), 'docs', 'images');
mkdirSync(output, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-operator-screenshots-'));
const config = loadConfig({
  env: {},
  overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
});
const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
try {
  const samples = [
    ['org-acme', 'Production', 'ada@acme.example', 40],
    ['org-globex', 'Developer', 'hank@globex.example', 12],
    ['org-initech', 'Free', 'peter@initech.example', 2],
    ['org-umbrella', 'Enterprise', 'alice@umbrella.example', 90],
  ] as const;
  const records = [];
  const now = Date.now();
  for (const [organization, plan, email, volume] of samples) {
    const key = await runtime.keys.create({ organization, name: 'backend', tier: plan });
    await runtime.keys.create({ organization, name: 'staging', tier: plan === 'Free' ? 'Free' : 'Developer' });
    await runtime.accounts.createOwner({ organization, email, password: PASSWORD });
    await runtime.accounts.createOwner({
      organization,
      email: `viewer@${organization.slice(4)}.example`,
      password: PASSWORD,
      role: 'member',
    });
    await runtime.organizations.setPlan(organization, plan, plan === 'Enterprise' ? { maxRequestsPerBatch: 200_000 } : null, CLI_ACTOR);
    for (let day = 20; day >= 0; day--) {
      for (let request = 0; request < volume; request++) {
        records.push({
          requestId: `req-${organization}-${day}-${request}`,
          organizationId: organization,
          keyId: key.record.id,
          model: 'gpt-4o-mini',
          endpoint: '/v1/chat/completions',
          inputTokens: 500 + ((day * 37 + request * 11) % 300),
          outputTokens: 150 + ((day * 13 + request * 7) % 200),
          cachedTokens: 0,
          reasoningTokens: 0,
          costUsd: 0.0006,
          batch: false,
          statusCode: 200,
          latencyMs: 300,
          createdAtMs: now - day * DAY - Math.min(60_000, Math.floor((now % DAY) / 2)),
        });
      }
    }
  }
  await new UsageLedgerRepository(runtime.database.db).insertMany(records);
  await runtime.organizations.suspend('org-initech', CLI_ACTOR);
  const operator = await runtime.people.createOperator('ops@switchyard.example', 'http://127.0.0.1');
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
  const browser = await launchChromium({ width: 1280, height: 900 });
  try {
    const page = await browser.context.newPage();
    await page.goto(`${origin}/dashboard/set-password#${operator.link.split('#')[1]}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/operator\/organizations$/);
    await page.getByRole('link', { name: 'org-umbrella' }).waitFor();
    await page.screenshot({ path: join(output, 'operator-organizations.png'), fullPage: false });
    await page.getByRole('link', { name: 'org-acme' }).click();
    await page.getByRole('heading', { name: /Limits now/ }).waitFor();
    await page.getByLabel('Tokens per day').fill('80000000');
    await page.getByRole('button', { name: 'Save plan' }).click();
    await page.getByRole('heading', { name: 'Limits now: Production (custom)' }).waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(output, 'operator-organization.png'), fullPage: false });
  } finally {
    await browser.close();
  }
  console.log(`screenshots written to ${output}`);
} finally {
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}
