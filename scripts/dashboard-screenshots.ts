/**
 * Regenerates the README's dashboard screenshots in docs/images: the owners' pages
 * (dashboard-keys.png, dashboard-usage.png) and the operator area (operator-organizations.png,
 * operator-organization.png). Each set gets a real server on a fresh data folder, sample keys, people
 * and a month of sample usage, and is taken through Debian's Chromium.
 * Run: node --import tsx scripts/dashboard-screenshots.ts [owner|operator]   (both without an argument)
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { CLI_ACTOR } from '../src/accounts/organizations.ts';
import { loadConfig, type Config } from '../src/config/index.ts';
import { UsageLedgerRepository } from '../src/db/repositories/usage-ledger-repository.ts';
import { startRuntime, type Runtime } from '../src/runtime.ts';
import { launchChromium } from '../test/support/browser.ts';

const DAY = 86_400_000;
const PASSWORD = 'screenshot password';
const output = join(process.cwd(), 'docs', 'images');

type LedgerRecord = Parameters<UsageLedgerRepository['insertMany']>[0][number];

/** One sample request `day` days ago (today's rows stay on today's UTC date even just after midnight). */
function sampleRequest(
  fields: Pick<LedgerRecord, 'requestId' | 'organizationId' | 'keyId' | 'model' | 'inputTokens' | 'outputTokens' | 'costUsd'>,
  day: number,
): LedgerRecord {
  const now = Date.now();
  return {
    ...fields,
    costMicroUsd: Math.round(fields.costUsd * 1_000_000),
    endpoint: '/v1/chat/completions',
    cachedTokens: 0,
    reasoningTokens: 0,
    batch: false,
    statusCode: 200,
    latencyMs: 300,
    createdAtMs: now - day * DAY - Math.min(60_000, Math.floor((now % DAY) / 2)),
  };
}

const start = (config: Config): Promise<Runtime> => startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });

/** A server on a fresh data folder, seeded by `seed`, listening; `restart` starts it again after seeding. */
async function withServer(
  name: string,
  seed: (runtime: Runtime) => Promise<void>,
  shoot: (runtime: Runtime, origin: string) => Promise<void>,
  restart: boolean,
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), `switchyard-${name}-screenshots-`));
  const config = loadConfig({
    env: {},
    overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
  });
  let runtime = await start(config);
  try {
    await seed(runtime);
    if (restart) {
      await runtime.close();
      runtime = await start(config);
    }
    await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    await shoot(runtime, `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`);
  } finally {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function inChromium(width: number, use: (page: Page) => Promise<void>): Promise<void> {
  const browser = await launchChromium({ width, height: 900 });
  try {
    await use(await browser.context.newPage());
  } finally {
    await browser.close();
  }
}

async function seedOwner(runtime: Runtime): Promise<void> {
  const organization = 'org-acme';
  await runtime.accounts.createOwner({
    organization,
    email: 'ada@acme.example',
    password: PASSWORD,
    allowedTiers: ['Developer', 'Production'],
  });
  const production = await runtime.keys.create({ organization, name: 'production backend', tier: 'Production' });
  const staging = await runtime.keys.create({ organization, name: 'staging', tier: 'Developer', expiresInMs: 30 * DAY });
  const old = await runtime.keys.create({ organization, name: 'old laptop', tier: 'Developer' });
  await runtime.keys.revoke(old.record.id);
  const records: LedgerRecord[] = [];
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
        const keyId = request % 3 === 0 ? staging.record.id : production.record.id;
        const costUsd = ((inputTokens + outputTokens) * price) / 1_000_000;
        records.push(
          sampleRequest(
            { requestId: `req-${day}-${model}-${request}`, organizationId: organization, keyId, model, inputTokens, outputTokens, costUsd },
            day,
          ),
        );
      }
    }
  }
  await new UsageLedgerRepository(runtime.database.db).insertMany(records);
}

async function shootOwner(_runtime: Runtime, origin: string): Promise<void> {
  await inChromium(1200, async (page) => {
    await page.goto(`${origin}/dashboard/sign-in`);
    await page.getByLabel('Email').fill('ada@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    await page.getByLabel('Name').fill('analytics job');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    await page.screenshot({ path: join(output, 'dashboard-keys.png'), fullPage: true });
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.locator('.uplot canvas').waitFor();
    await page.screenshot({ path: join(output, 'dashboard-usage.png'), fullPage: false });
  });
}

async function seedOperator(runtime: Runtime): Promise<void> {
  const samples = [
    ['org-acme', 'Production', 'ada@acme.example', 40],
    ['org-globex', 'Developer', 'hank@globex.example', 12],
    ['org-initech', 'Free', 'peter@initech.example', 2],
    ['org-umbrella', 'Enterprise', 'alice@umbrella.example', 90],
  ] as const;
  const records: LedgerRecord[] = [];
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
        const inputTokens = 500 + ((day * 37 + request * 11) % 300);
        const outputTokens = 150 + ((day * 13 + request * 7) % 200);
        const requestId = `req-${organization}-${day}-${request}`;
        records.push(
          sampleRequest(
            {
              requestId,
              organizationId: organization,
              keyId: key.record.id,
              model: 'gpt-4o-mini',
              inputTokens,
              outputTokens,
              costUsd: 0.0006,
            },
            day,
          ),
        );
      }
    }
  }
  await new UsageLedgerRepository(runtime.database.db).insertMany(records);
  await runtime.organizations.suspend('org-initech', CLI_ACTOR);
}

async function shootOperator(runtime: Runtime, origin: string): Promise<void> {
  const operator = await runtime.people.createOperator('ops@switchyard.example', 'http://127.0.0.1');
  await inChromium(1280, async (page) => {
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
  });
}

const which = process.argv[2];
mkdirSync(output, { recursive: true });
// The owners' sample usage is written to the ledger by a first start; the second start restores today's
// and this month's counters from it, as a restarted single instance does, so the limit meters show it too.
if (which === undefined || which === 'owner') await withServer('owner', seedOwner, shootOwner, true);
if (which === undefined || which === 'operator') await withServer('operator', seedOperator, shootOperator, false);
console.log(`screenshots written to ${output}`);
