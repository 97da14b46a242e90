// Issue 39's batches through an object-store outage, as an operator would meet it: two `switchyard
// serve` processes on a PRIVATE Postgres (initdb/pg_ctl on a free port, never the shared 5432) whose
// file store is a private s3rver reached only through a TCP fault proxy (test/support/chaos/
// fault-proxy.ts). A 300-line batch runs; while its last lines run the store goes away for 25 s (15 s
// blackholed: requests hang until S3_REQUEST_TIMEOUT_MS, 5 s, three times over; then 10 s reset:
// connections refused), so its finalisation meets the outage; a second batch is created during it.
// Promises: the first batch ends `completed` with every line's result downloadable once the store is
// back; the create during the outage is refused with 500 `service_unavailable` or completes; no batch is
// failed by the outage; the mock upstream saw every line exactly once; each instance logs a few lines
// about it, not one per retry. About 1.5 minutes. Needs initdb, pg_ctl and postgres on PATH; skipped LOUDLY otherwise.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { lastUserText } from '../support/mock-upstreams/index.ts';
import { ChaosUpstream } from '../support/chaos/chaos-upstream.ts';
import { FaultProxy } from '../support/chaos/fault-proxy.ts';
import { Fleet } from '../support/chaos/fleet.ts';
import { canRunPrivatePostgres, PrivatePostgres } from '../support/chaos/private-postgres.ts';
import { PrivateS3 } from '../support/chaos/private-s3.ts';
import { runCli } from '../support/run-cli.ts';
import { until } from '../support/until.ts';

const LINES = 300;
const LATE_LINES = 40;
const BLACKHOLE_MS = 15_000;
const RESET_MS = 10_000;

if (!canRunPrivatePostgres) {
  console.warn('\n*** SKIPPED: batch object-store outage chaos suite (needs initdb, pg_ctl and postgres on PATH; it starts its own) ***\n');
}

interface ResultLine {
  custom_id: string;
  response?: { status_code?: number; body?: { choices?: Array<{ message?: { content?: string } }> } } | null;
  error?: { code?: string; message?: string } | null;
}

function batchInput(prefix: string, count: number): string {
  return Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      custom_id: `${prefix}-${index}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'batch-chat', max_tokens: 16, messages: [{ role: 'user', content: `${prefix} ${index}` }] },
    }),
  ).join('\n');
}

describe('batches through a 25 s object-store outage (fault proxy), two instances', { skip: !canRunPrivatePostgres }, () => {
  let postgres: PrivatePostgres | undefined;
  let s3: PrivateS3 | undefined;
  let proxy: FaultProxy | undefined;
  let upstream: ChaosUpstream | undefined;
  let fleet: Fleet | undefined;
  let directory: string;
  let key: string;
  const client = (index: number, timeout = 20_000): OpenAI =>
    new OpenAI({ apiKey: key, baseURL: `${fleet!.origin(index)}/v1`, maxRetries: 0, timeout });

  // The run happens once; each promise is its own test.
  let first: OpenAI.Batches.Batch;
  const firstStatusDuringOutage: string[] = [];
  let lateCreate: { status: number; body: { id?: string; status?: string; error?: { type?: string; code?: string } } };
  let late: OpenAI.Batches.Batch | undefined;
  const lateStatusDuringOutage: string[] = [];
  const outputs = new Map<string, ResultLine[]>();
  const errorsOf = new Map<string, ResultLine[]>();
  let logLinesPerInstance: Array<{ wait: number; failed: number; other: number }> = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-chaos-batches-'));
    [postgres, s3, upstream] = await Promise.all([PrivatePostgres.create(), PrivateS3.create(), new ChaosUpstream(200).start()]);
    proxy = await FaultProxy.start(s3.port);
    const configFile = join(directory, 'config.json');
    upstream.writeConfig(configFile);
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: postgres.url,
      SWITCHYARD_CONFIG: configFile,
      BATCH_CONCURRENCY: '8',
      BATCH_LEASE_MS: '3000',
      LOG_LEVEL: 'info',
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
      DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      S3_CONNECT_TIMEOUT_MS: '2000',
      S3_REQUEST_TIMEOUT_MS: '5000',
      ...s3.env(),
      // Through the proxy only.
      AWS_ENDPOINT_URL: `http://${proxy.address}`,
    };
    fleet = await Fleet.start(2, env);
    const created = await runCli(['keys', 'create', '--org', 'org-chaos', '--create-org', '--tier', 'Production', '--json'], env);
    if (created.code !== 0) throw new Error(`keys create failed: ${created.stderr}`);
    key = (JSON.parse(created.stdout) as { key: string }).key;

    const input = await client(0).files.create({
      file: await toFile(Buffer.from(batchInput('first', LINES)), 'first.jsonl'),
      purpose: 'batch',
    });
    const lateInput = await client(1).files.create({
      file: await toFile(Buffer.from(batchInput('late', LATE_LINES)), 'late.jsonl'),
      purpose: 'batch',
    });
    first = await client(0).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    // The store goes away while the last lines run: finalisation meets the outage.
    await until(
      async () => {
        const batch = await client(0).batches.retrieve(first.id);
        return (batch.request_counts?.completed ?? 0) >= (LINES * 2) / 3 ? true : undefined;
      },
      'two thirds of the lines to be done',
      // A hang guard, not a speed bound: quiet this takes seconds; 60 s was exceeded at load average 29.
      180_000,
      50,
    );
    const outageStarted = Date.now();
    proxy.set('blackhole');
    console.log(
      `[chaos] object store blackholed at ${(await client(0).batches.retrieve(first.id)).request_counts?.completed} of ${LINES} lines`,
    );

    // A batch created during the outage, on the other instance (raw HTTP: the status and the envelope as sent).
    const response = await fetch(`${fleet.origin(1)}/v1/batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: lateInput.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    lateCreate = { status: response.status, body: (await response.json()) as typeof lateCreate.body };
    console.log(`[chaos] create during the outage: ${response.status} ${JSON.stringify(lateCreate.body).slice(0, 160)}`);

    const watch = async (until: number, mode: string): Promise<void> => {
      while (Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const current = await client(0, 5_000)
          .batches.retrieve(first.id)
          .catch(() => undefined);
        if (current !== undefined) firstStatusDuringOutage.push(`${mode}:${current.status}`);
        if (lateCreate.body.id !== undefined) {
          const lateNow = await client(1, 5_000)
            .batches.retrieve(lateCreate.body.id)
            .catch(() => undefined);
          if (lateNow !== undefined) lateStatusDuringOutage.push(`${mode}:${lateNow.status}`);
        }
      }
    };
    await watch(outageStarted + BLACKHOLE_MS, 'blackhole');
    proxy.set('reset');
    await watch(outageStarted + BLACKHOLE_MS + RESET_MS, 'reset');
    proxy.set('pass');
    const healedAt = Date.now();
    console.log(
      `[chaos] object store back after ${((healedAt - outageStarted) / 1000).toFixed(1)} s; first batch: ${firstStatusDuringOutage.at(-1)}`,
    );

    const finished = async (id: string, index: number): Promise<OpenAI.Batches.Batch> =>
      until(
        async () => {
          const batch = await client(index, 5_000).batches.retrieve(id);
          return ['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) ? batch : undefined;
        },
        `batch ${id} to end`,
        75_000,
        250,
      );
    first = await finished(first.id, 0);
    console.log(`[chaos] first batch ${first.status} ${((Date.now() - healedAt) / 1000).toFixed(1)} s after the heal`);
    if (lateCreate.body.id !== undefined) late = await finished(lateCreate.body.id, 1);
    for (const batch of [first, late]) {
      if (batch === undefined) continue;
      const read = async (fileId: string | null | undefined): Promise<ResultLine[]> =>
        fileId === null || fileId === undefined
          ? []
          : (await (await client(1).files.content(fileId)).text())
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => JSON.parse(line) as ResultLine);
      outputs.set(batch.id, await read(batch.output_file_id));
      errorsOf.set(batch.id, await read(batch.error_file_id));
    }
    // CHAOS_LOGS=<directory> keeps each instance's output for a closer look.
    const keep = process.env['CHAOS_LOGS'];
    if (keep !== undefined)
      for (const index of [0, 1]) writeFileSync(join(keep, `batch-outage-instance-${index}.log`), fleet.output(index));
    logLinesPerInstance = [0, 1].map((index) => {
      const lines = fleet!.output(index).split('\n');
      return {
        wait: lines.filter((line) => line.includes('batch steps wait')).length,
        failed: lines.filter((line) => /batch step failed|keeps failing|the batch fails/.test(line)).length,
        other: lines.filter((line) => /batch steps work again|batch result files/.test(line)).length,
      };
    });
    console.log(`[chaos] batch step log lines per instance: ${JSON.stringify(logLinesPerInstance)}`);
  });

  after(async () => {
    await Promise.allSettled([fleet?.close()]);
    await Promise.allSettled([proxy?.close(), s3?.close(), upstream?.close(), postgres?.close()]);
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  test('the batch whose finalisation met the outage ends completed, never failed, with every line’s result downloadable', () => {
    assert.ok(
      firstStatusDuringOutage.every((entry) => !entry.endsWith(':failed')),
      `never failed during the outage: ${firstStatusDuringOutage.join(', ')}`,
    );
    assert.equal(first.status, 'completed', JSON.stringify(first.errors));
    assert.deepEqual([first.request_counts?.total, first.request_counts?.completed, first.request_counts?.failed], [LINES, LINES, 0]);
    const output = outputs.get(first.id) ?? [];
    assert.deepEqual(
      output.map((line) => line.custom_id).sort(),
      Array.from({ length: LINES }, (_, index) => `first-${index}`).sort(),
      'each line once in the output file',
    );
    assert.ok(output.every((line) => line.response?.status_code === 200));
    assert.deepEqual(errorsOf.get(first.id), []);
  });

  test('a create during the outage is refused with 500 service_unavailable, or completes', () => {
    if (lateCreate.status !== 200) {
      assert.equal(lateCreate.status, 500);
      assert.deepEqual([lateCreate.body.error?.type, lateCreate.body.error?.code], ['server_error', 'service_unavailable']);
      return;
    }
    assert.ok(late !== undefined);
    assert.ok(
      lateStatusDuringOutage.every((entry) => !entry.endsWith(':failed')),
      `never failed during the outage: ${lateStatusDuringOutage.join(', ')}`,
    );
    assert.equal(late.status, 'completed', JSON.stringify(late.errors));
    assert.equal(late.request_counts?.completed, LATE_LINES);
    assert.deepEqual(
      (outputs.get(late.id) ?? []).map((line) => line.custom_id).sort(),
      Array.from({ length: LATE_LINES }, (_, index) => `late-${index}`).sort(),
    );
  });

  test('the mock upstream saw every batch line exactly once', async () => {
    const seen = new Map<string, number>();
    const where = new Map<string, string[]>();
    for (const [index, request] of upstream!.requests.entries()) {
      const prompt = lastUserText(request.body);
      if (!/^(first|late) \d+$/.test(prompt)) continue;
      seen.set(prompt, (seen.get(prompt) ?? 0) + 1);
      const outcome = await Promise.race([request.outcome, new Promise((resolve) => setTimeout(() => resolve('pending'), 10))]);
      where.set(prompt, [...(where.get(prompt) ?? []), `#${index} port ${request.remotePort} ${JSON.stringify(outcome)}`]);
    }
    const twice = [...where].filter(([prompt]) => seen.get(prompt) !== 1);
    if (twice.length > 0)
      console.log(
        `[chaos] sent more than once:\n${twice
          .slice(0, 6)
          .map(([prompt, list]) => `${prompt}: ${list.join(' | ')}`)
          .join('\n')}`,
      );
    const expected = LINES + (late === undefined ? 0 : LATE_LINES);
    assert.equal(seen.size, expected);
    assert.deepEqual(
      [...seen].filter(([, count]) => count !== 1),
      [],
      'no line sent upstream twice',
    );
  });

  test('each instance logs the outage in a few lines, not one per retry; no step failure is counted for it', () => {
    for (const [index, counts] of logLinesPerInstance.entries()) {
      assert.ok(counts.wait <= 2, `instance ${index}: ${counts.wait} "batch steps wait" lines`);
      assert.equal(counts.failed, 0, `instance ${index}: a step failure was counted`);
      assert.ok(counts.wait + counts.other <= 4, `instance ${index}: ${JSON.stringify(counts)}`);
    }
  });
});
