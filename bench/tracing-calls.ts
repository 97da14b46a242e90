/**
 * What the tracing calls of one JSON chat request cost by themselves, with the export of the spans
 * they make: the same calls the edge and the services make for a chat request (the request's server
 * span, auth, admission, the upstream attempt with its events, settlement, the ledger record: six
 * spans), every request sampled, exported over OTLP/HTTP to a local sink in its own process
 * (support/otlp-sink.ts). Compares the encodings in interleaved rounds, one process:
 * - http/protobuf (the default, telemetry/otlp-proto.ts);
 * - http/json (telemetry/otlp-json.ts).
 * Prints CPU µs per request (the calls, the encoding and the sending of the exports, a flush ends each
 * run) per round and the median, and the bytes each request's spans take on the wire.
 *
 *   node --import tsx bench/tracing-calls.ts [requests per run] [--rounds N]
 *
 * Profile with `node --cpu-prof --import tsx bench/tracing-calls.ts`.
 */
import { answeredUsage } from '../src/core/usage.ts';
import { createOtelTracing } from '../src/telemetry/otel-tracing.ts';
import { SPAN_NAMES, type Tracing } from '../src/telemetry/trace-types.ts';
import { runPinnedTo, startProcess, type RunningProcess } from './support/processes.ts';

runPinnedTo(0);

const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag === -1 ? 7 : Math.max(1, Number(process.argv[roundsFlag + 1]));
const requestsPerRun = Number(process.argv.find((argument, index) => /^\d+$/.test(argument) && index !== roundsFlag + 1) ?? 20_000);
const SINK_PORT = 18_471;
const USAGE = answeredUsage({ inputTokens: 17, outputTokens: 9 });
const HEADERS = {
  host: '127.0.0.1:8080',
  authorization: 'Bearer sk-bench',
  'content-type': 'application/json',
  'user-agent': 'autocannon',
};

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The tracing calls of one chat request, in the order the service makes them. */
function chatRequest(tracing: Tracing, index: number): void {
  const trace = tracing.startServerRequest({
    method: 'POST',
    route: '/v1/chat/completions',
    path: '/v1/chat/completions',
    scheme: 'http',
    serverAddress: '127.0.0.1',
    serverPort: 8080,
    clientAddress: '127.0.0.1',
    userAgent: 'autocannon',
    requestId: `req-${index}`,
    headers: HEADERS,
  });
  const auth = trace.startStep(SPAN_NAMES.auth);
  auth.setAttribute('switchyard.key_id', 'key_bench');
  auth.setAttribute('switchyard.tier', 'Enterprise');
  auth.end();
  trace.setAttribute('switchyard.key_id', 'key_bench');
  trace.setAttribute('switchyard.tier', 'Enterprise');
  trace.generationRequest('chat', { model: 'bench-model', maxOutputTokens: 64, messages: [] } as never);
  const admit = trace.startStep(SPAN_NAMES.admit);
  admit.end();
  const attempt = trace.startAttempt(
    {
      providerKind: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:18450/v1',
      upstreamModel: 'bench-model',
      model: 'bench-model',
      deployment: 'mock',
      attempt: 1,
      retry: 0,
    },
    'chat',
  );
  attempt.connected();
  attempt.responded(200);
  attempt.committed();
  attempt.responseModel('bench-model');
  attempt.ended();
  attempt.finished(USAGE, 'stop');
  attempt.end();
  trace.usage(USAGE, 'stop');
  const settle = trace.startStep(SPAN_NAMES.settle);
  settle.end();
  const ledger = trace.startStep(SPAN_NAMES.ledger, {
    'switchyard.ledger.model': 'bench-model',
    'switchyard.ledger.endpoint': '/v1/chat/completions',
    'switchyard.ledger.input_tokens': 17,
    'switchyard.ledger.output_tokens': 9,
    'switchyard.ledger.cost_usd': 0.000_031,
    'switchyard.ledger.status_code': 200,
    'switchyard.ledger.batch': false,
  });
  ledger.end();
  trace.end(200);
}

const started: RunningProcess[] = [];
try {
  const sink = await startProcess('bench/support/otlp-sink.ts', [String(SINK_PORT)], {}, /listening/, 1);
  started.push(sink);
  const endpoint = `http://127.0.0.1:${SINK_PORT}/v1/traces`;
  const targets = (['http/protobuf', 'http/json'] as const).map((protocol) => ({
    protocol,
    tracing: createOtelTracing({ endpoint, serviceName: 'switchyard', sampler: 'parentbased_always_on', headers: {}, protocol }),
    runs: [] as number[],
  }));
  const measure = async (target: (typeof targets)[number], calls: number): Promise<number> => {
    const before = process.cpuUsage();
    // In slices, as requests come: the exporter's batches leave between them.
    for (let index = 0; index < calls; index++) {
      chatRequest(target.tracing, index);
      if (index % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    await target.tracing.forceFlush();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / calls;
  };
  for (const target of targets) await measure(target, Math.min(5_000, requestsPerRun));
  for (let round = 0; round < rounds; round++)
    for (let step = 0; step < targets.length; step++) {
      const target = targets[(round + step) % targets.length]!;
      target.runs.push(await measure(target, requestsPerRun));
    }
  console.log(`\nThe tracing calls of a JSON chat request (6 spans) and their export, ${requestsPerRun} requests a run, ${rounds} rounds`);
  console.log('| encoding | CPU µs/req (median) | per round | / http/json (median of rounds) |');
  console.log('|---|---:|---|---:|');
  const json = targets[1]!;
  for (const target of targets)
    console.log(
      `| ${target.protocol} | ${median(target.runs).toFixed(1)} | ${target.runs.map((run) => run.toFixed(1)).join(', ')} | ${median(
        target.runs.map((run, round) => run / json.runs[round]!),
      ).toFixed(2)}x |`,
    );
  for (const target of targets) await target.tracing.shutdown();
} finally {
  for (const process of started.reverse()) await process.stop();
}
