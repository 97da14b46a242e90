/**
 * Fair shares of the built-in engines, as the attack was made (real server, real HTTP, the official
 * openai SDK): moderation and count_tokens are metered by input tokens (they count toward tpm) and
 * moderation input is capped; a 1 MB moderation from one organization delays another organization's
 * embeddings call by well under 500 ms (the shared encoder serves organizations in turn); /healthz
 * stays quick while a 9 MB moderation, a 1 MB one and three 9 MB count_tokens are served (the work on
 * the event loop yields between slices).
 *
 * Timings are measured on the CI machine (2 busy cores): each assertion leaves a wide margin over the
 * figures printed beside it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { runCli } from '../support/run-cli.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const UNLIMITED = { requestsPerMinute: 0, tokensPerMinute: 0, tokensPerDay: 0, tokensPerMonth: 0, concurrentBatches: 0 };
const PERMISSIONS = ['moderations', 'embeddings', 'messages', 'models'];
/** About 1 MB of text with no sentence break (the attack's input: one 1 MB "sentence"). */
const ONE_MB = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(1_000_000 / 27)).slice(0, 1_000_000);

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('fair shares of the built-in engines: metering and caps', () => {
  let server: TestServer;
  let keyA: string;
  let meteredKey: string;

  before(async () => {
    server = await startTestServer({
      config: {
        tiers: {
          Developer: { ...UNLIMITED, permissions: PERMISSIONS as never },
          Metered: { ...UNLIMITED, tokensPerMinute: 1000, permissions: PERMISSIONS as never },
        },
      },
    });
    keyA = (await server.createKey({ tier: 'Developer', organization: 'org-a' })).key;
    meteredKey = (await server.createKey({ tier: 'Metered', organization: 'org-metered' })).key;
  });
  after(async () => {
    await server.close();
  });

  async function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  async function dailyUsed(key: string): Promise<number> {
    const status: any = await (await fetch(`${server.baseUrl}/auth/key`, { headers: { authorization: `Bearer ${key}` } })).json();
    return status.usage_info.daily.used;
  }

  test('moderation and count_tokens are metered by input tokens and count toward tpm', async () => {
    const before = await dailyUsed(meteredKey);
    const moderated = await post('/moderations', meteredKey, { model: 'switchyard-moderation', input: 'a short and friendly note' });
    assert.equal(moderated.status, 200);
    const counted = await post(
      '/messages/count_tokens',
      meteredKey,
      { model: 'switchyard-echo', messages: [{ role: 'user', content: 'count these few words' }] },
      { 'anthropic-version': '2023-06-01' },
    );
    assert.equal(counted.status, 200);
    const inputTokens: number = counted.body.input_tokens;
    assert.ok(inputTokens > 0);
    const used = (await dailyUsed(meteredKey)) - before;
    // The moderation's 5 tokens and the count's own figure.
    assert.equal(used, 5 + inputTokens);

    // 1,500 tokens against a tpm of 1,000: refused before any work, on both routes.
    const long = 'word '.repeat(1500);
    const refusedModeration = await post('/moderations', meteredKey, { model: 'switchyard-moderation', input: long });
    assert.equal(refusedModeration.status, 429);
    assert.equal(refusedModeration.body.error.code, 'tpm_exceeded');
    const refusedCount = await post(
      '/messages/count_tokens',
      meteredKey,
      { model: 'switchyard-echo', messages: [{ role: 'user', content: long }] },
      { 'anthropic-version': '2023-06-01' },
    );
    assert.equal(refusedCount.status, 429);
    assert.equal(refusedCount.body.error.type, 'rate_limit_exceeded');
  });

  test('moderation input above 1 MiB of text is a 400 naming input', async () => {
    const answer = await post('/moderations', keyA, { model: 'switchyard-moderation', input: ['short', 'x'.repeat(1024 * 1024)] });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'invalid_parameter');
    assert.equal(answer.body.error.param, 'input');
    assert.match(answer.body.error.message, /at most 1048576 characters/);
  });
});

describe('fair shares of the built-in engines: timings against a server process', () => {
  // A separate process, so that the test's own work (building and sending 9 MB bodies) is not on the
  // event loop being measured.
  let server: ServerProcess;
  let directory: string;
  let orgA: OpenAI;
  let orgB: OpenAI;
  let keyA: string;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-fairness-'));
    const configFile = join(directory, 'config.json');
    writeFileSync(configFile, JSON.stringify({ bootstrapKey: false, tiers: { Developer: { ...UNLIMITED, permissions: PERMISSIONS } } }));
    const env = { SWITCHYARD_CONFIG: configFile, DATA_DIR: directory };
    const createKey = async (organization: string): Promise<string> => {
      const created = await runCli(['keys', 'create', '--org', organization, '--create-org', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      return (JSON.parse(created.stdout) as { key: string }).key;
    };
    keyA = await createKey('org-a');
    const keyB = await createKey('org-b');
    server = await startServerProcess(env);
    orgA = new OpenAI({ apiKey: keyA, baseURL: `${server.origin}/v1`, maxRetries: 0 });
    orgB = new OpenAI({ apiKey: keyB, baseURL: `${server.origin}/v1`, maxRetries: 0 });
    // Load the encoder and embed the moderation examples before anything is timed.
    await orgA.moderations.create({ model: 'switchyard-moderation', input: 'warm up' });
    await orgB.embeddings.create({ model: 'switchyard-embeddings', input: 'warm up' });
  });
  after(async () => {
    await server?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  test("a 1 MB moderation from one organization delays another's embeddings call by less than 500 ms (or 8x a baseline)", async () => {
    const alone: number[] = [];
    // An embeddings call of one encoder slice (400 characters) alone: what a slice of the big moderation
    // costs the encoder on this machine at this moment, the scale of the delay below.
    const sliceAlone: number[] = [];
    for (let round = 0; round < 5; round++) {
      let started = performance.now();
      await orgB.embeddings.create({ model: 'switchyard-embeddings', input: `hello ${round}` });
      alone.push(performance.now() - started);
      started = performance.now();
      await orgB.embeddings.create({ model: 'switchyard-embeddings', input: `${ONE_MB.slice(0, 396)} ${round}` });
      sliceAlone.push(performance.now() - started);
    }
    const abort = new AbortController();
    let bigDone = false;
    const big = orgA.moderations.create({ model: 'switchyard-moderation', input: ONE_MB }, { signal: abort.signal }).then(
      () => (bigDone = true),
      () => undefined,
    );
    // Let the big request reach the encoder (upload, token count, chunking: well under a second).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const during: number[] = [];
    for (let round = 0; round < 3; round++) {
      const started = performance.now();
      await orgB.embeddings.create({ model: 'switchyard-embeddings', input: `hello again ${round}` });
      during.push(performance.now() - started);
    }
    const stillRunning = !bigDone;
    abort.abort(); // nobody waits for the rest of its ~200 pieces
    await big;
    const delay = median(during) - median(alone);
    console.log(
      `embeddings alone ${alone.map((ms) => ms.toFixed(0)).join(', ')} ms; a one-slice embedding alone ${sliceAlone.map((ms) => ms.toFixed(0)).join(', ')} ms; during the 1 MB moderation ${during.map((ms) => ms.toFixed(0)).join(', ')} ms; delay ${delay.toFixed(0)} ms (median)`,
    );
    assert.ok(stillRunning, 'the 1 MB moderation was still being served while the embeddings calls were timed');
    // `stillRunning` is the fairness itself: starved (before the slicing), each embeddings call waited
    // for the whole moderation, which was then over. The delay bound says how fine the slices are, and
    // scales with the same test's baseline: quiet, an embeddings call takes ~10-30 ms and the delay stays
    // far under 500 ms; beside another full test run (2026-11-29) the baseline was ~105 ms and the delay
    // 610 ms, each slice slowed as much as the calls around it, so 5x was one machine's noise from failing.
    // A second baseline: the one-slice embedding alone, the work the other organization waits for. Beside
    // other full runs (load average 12-18) the short call's median was 61-79 ms and the delay 519-851 ms,
    // over the first bound, while the one-slice call took 163-669 ms (median 555). Slices 10x coarser
    // would still fail: the one-slice baseline does not grow with them.
    const bound = Math.max(500, 8 * median(alone), 8 * median(sliceAlone));
    assert.ok(delay < bound, `delay ${delay.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`);
  });

  test('/healthz stays within 50 ms of its baseline (median) during a 9 MB moderation, a 1 MB moderation and three parallel 9 MB count_tokens', async () => {
    const nineMb = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(9_000_000 / 27)).slice(0, 9_000_000);
    // Bodies built before anything is timed.
    const moderationBody = Buffer.from(JSON.stringify({ model: 'switchyard-moderation', input: nineMb }));
    const oneMbBody = Buffer.from(JSON.stringify({ model: 'switchyard-moderation', input: ONE_MB }));
    const countBody = Buffer.from(JSON.stringify({ model: 'switchyard-echo', messages: [{ role: 'user', content: nineMb }] }));
    const send = (path: string, body: Buffer, signal?: AbortSignal) =>
      fetch(`${server.origin}/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body,
        ...(signal === undefined ? {} : { signal }),
      }).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      });
    const statuses: Record<string, number> = {};
    let countsPending = 3;
    const abort = new AbortController();
    const big = [
      send('/moderations', moderationBody).then((status) => (statuses['moderation 9 MB'] = status)),
      send('/moderations', oneMbBody, abort.signal).then(
        (status) => (statuses['moderation 1 MB'] = status),
        () => undefined,
      ),
      ...[1, 2, 3].map((index) =>
        send('/messages/count_tokens', countBody).then((status) => {
          statuses[`count_tokens ${index}`] = status;
          countsPending--;
        }),
      ),
    ];
    // A baseline from the same machine at the same moment: /healthz with nothing else in flight.
    const baseline: number[] = [];
    for (let round = 0; round < 10; round++) {
      const started = performance.now();
      await (await fetch(`${server.origin}/healthz`)).arrayBuffer();
      baseline.push(performance.now() - started);
    }
    const latencies: number[] = [];
    // Polled every 50 ms while the three counts are in flight (the 1 MB moderation's encoder work outlasts them).
    while (countsPending > 0) {
      const started = performance.now();
      const response = await fetch(`${server.origin}/healthz`);
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      assert.equal(response.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const moderationStillRunning = statuses['moderation 1 MB'] === undefined;
    abort.abort();
    await Promise.all(big);
    const sorted = [...latencies].sort((left, right) => left - right);
    const p95 = sorted[Math.floor(sorted.length * 0.95)]!;
    console.log(
      `/healthz over ${latencies.length} polls: median ${median(latencies).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms; answers ${JSON.stringify(statuses)}`,
    );
    assert.ok(latencies.length >= 5, `only ${latencies.length} polls`);
    assert.equal(statuses['moderation 9 MB'], 400, 'the 9 MB moderation is refused by the input cap');
    for (const index of [1, 2, 3]) assert.equal(statuses[`count_tokens ${index}`], 200);
    assert.ok(moderationStillRunning, 'the 1 MB moderation was in flight all along');
    // Before the slicing, these requests held the event loop (every route, /healthz included) for
    // 4.7-6.5 s at a time. Measured on this 2-core machine while it ran four other engineers' test suites
    // (load average ~20): median 30-40 ms, p95 ~170 ms, max ~0.5 s (GC and the OS's scheduling, not
    // one request's work: each step is 3 ms, one 9 MB JSON.parse ~30 ms). Asserted: the median under
    // 50 ms and no stall of a second.
    // Asserted against the baseline taken just before, so that a busy machine (every request slower)
    // cannot fail it while a held loop (seconds) still does: the median within 50 ms of the baseline's
    // (or 3x it), no stall of a second (or 20x the baseline's median).
    const quiet = median(baseline);
    console.log(`/healthz baseline (nothing in flight): median ${quiet.toFixed(1)} ms`);
    assert.ok(
      median(latencies) < Math.max(quiet + 50, 3 * quiet),
      `median ${median(latencies).toFixed(1)} ms (baseline ${quiet.toFixed(1)} ms)`,
    );
    assert.ok(sorted.at(-1)! < Math.max(1000, 20 * quiet), `max ${sorted.at(-1)!.toFixed(1)} ms (baseline ${quiet.toFixed(1)} ms)`);
  });
});
