/**
 * The dashboard's usage page with 1,000,000 ledger rows for one organization (spread over 120 days,
 * 5 models, 10 keys): p50/p95 of GET /dashboard/api/usage?days=90 through the real server (session
 * cookie, rollups), beside the baseline of the same per-day, per-model figures computed from raw
 * ledger rows. Target: p95 < 200 ms. Figures are printed, never asserted.
 *
 * The ledger rows are generated inside the database (one INSERT ... SELECT) and their rollups built
 * with one INSERT ... SELECT ... GROUP BY, the statement migration 0020 uses for existing rows; live
 * traffic maintains the same rollups row by row in the ledger's transaction.
 *
 * Run: node --import tsx bench/dashboard-usage.ts   (BENCH_ROWS=200000 to shrink; BENCH_DATABASE_URL=postgres://... for Postgres)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../src/config/index.ts';
import { startRuntime } from '../src/runtime.ts';

const ROWS = Number(process.env['BENCH_ROWS'] ?? 1_000_000);
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 100);
const DAY = 86_400_000;
const SPAN_MS = 120 * DAY;
const ORGANIZATION = 'org-bench';

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

async function time(samples: number, run: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  await run(); // warm caches and the statement cache
  const durations: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = performance.now();
    await run();
    durations.push(performance.now() - started);
  }
  return { p50: percentile(durations, 0.5), p95: percentile(durations, 0.95) };
}

const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-dashboard-'));
const databaseUrl = process.env['BENCH_DATABASE_URL'];
const config = loadConfig({
  env: {},
  overrides: {
    dataDir,
    logLevel: 'silent',
    bootstrapKey: false,
    server: { port: 0, host: '127.0.0.1' },
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
  },
});
const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
try {
  const { db, dialect } = runtime.database;
  const now = Date.now();
  const loadStarted = performance.now();
  if (dialect === 'sqlite') {
    await sql`with recursive seq(n) as (select 0 union all select n + 1 from seq where n < ${ROWS - 1})
      insert into usage_ledger (request_id, organization_id, key_id, model, endpoint, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, batch, status_code, latency_ms, created_at)
      select 'req-' || n, ${ORGANIZATION}, 'key_' || (n % 10), 'model-' || (n % 5), '/v1/chat/completions', 100 + n % 50, 20 + n % 30, 0, 0, 0.0001 * (1 + n % 7), 0, 200, 5.0, ${now} - (n * ${SPAN_MS} / ${ROWS})
      from seq`.execute(db);
  } else {
    await sql`insert into usage_ledger (request_id, organization_id, key_id, model, endpoint, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, batch, status_code, latency_ms, created_at)
      select 'req-' || n, ${ORGANIZATION}, 'key_' || (n % 10), 'model-' || (n % 5), '/v1/chat/completions', 100 + n % 50, 20 + n % 30, 0, 0, 0.0001 * (1 + n % 7), 0, 200, 5.0, ${now}::bigint - (n::bigint * ${SPAN_MS} / ${ROWS})
      from generate_series(0, ${ROWS - 1}) as n`.execute(db);
  }
  await sql`delete from usage_daily where organization_id = ${ORGANIZATION}`.execute(db);
  await sql`insert into usage_daily (organization_id, day_start, model, key_id, requests, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd)
    select organization_id, (created_at / 86400000) * 86400000, model, key_id, count(*), sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(reasoning_tokens), sum(cost_usd)
    from usage_ledger where organization_id = ${ORGANIZATION} group by organization_id, (created_at / 86400000) * 86400000, model, key_id`.execute(
    db,
  );
  if (dialect === 'postgres') await sql`analyze`.execute(db);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const rollupRows = Number(
    (await sql<{ count: number }>`select count(*) as count from usage_daily where organization_id = ${ORGANIZATION}`.execute(db)).rows[0]!
      .count,
  );

  await runtime.accounts.createOwner({ organization: ORGANIZATION, email: 'bench@example.com', password: 'bench password 1' });
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
  const signIn = await fetch(`${origin}/dashboard/api/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'bench password 1' }),
  });
  const cookie = /switchyard_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')![0];

  let lastBody: { data: unknown[]; totals: { requests: number } } | undefined;
  const api = await time(SAMPLES, async () => {
    const response = await fetch(`${origin}/dashboard/api/usage?days=90`, { headers: { cookie } });
    lastBody = (await response.json()) as typeof lastBody;
  });
  const fromDay = Math.floor(now / DAY) * DAY - 89 * DAY;
  // Baseline: the same figures from raw ledger rows (what a usage page without rollups would run).
  const rawSamples = Math.max(5, Math.floor(SAMPLES / 10));
  let rawRequests = 0;
  const raw = await time(rawSamples, async () => {
    const result = await sql<{
      requests: number;
    }>`select (created_at / 86400000) * 86400000 as day_start, model, count(*) as requests, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_usd) as cost_usd
      from usage_ledger where organization_id = ${ORGANIZATION} and created_at >= ${fromDay}
      group by (created_at / 86400000) * 86400000, model order by 1, 2`.execute(db);
    rawRequests = result.rows.reduce((sum, row) => sum + Number(row.requests), 0);
  });

  console.log(
    `dashboard usage, ${dialect}: ${ROWS.toLocaleString('en-US')} ledger rows for one organization (loaded with rollups in ${loadSeconds.toFixed(1)} s; ${rollupRows} rollup rows)`,
  );
  console.log('query                                             p50 ms    p95 ms');
  console.log(
    `GET /dashboard/api/usage?days=90 (rollups, HTTP) ${api.p50.toFixed(1).padStart(8)} ${api.p95.toFixed(1).padStart(9)}   (${SAMPLES} samples; target p95 < 200 ms)`,
  );
  console.log(
    `baseline: same figures from raw ledger rows (SQL) ${raw.p50.toFixed(1).padStart(7)} ${raw.p95.toFixed(1).padStart(9)}   (${rawSamples} samples)`,
  );
  console.log(`check: requests in the 90-day range, rollups ${lastBody!.totals.requests} vs raw ledger ${rawRequests}`);
} finally {
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}
