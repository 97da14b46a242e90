/**
 * What the tracing calls of one JSON chat request cost by themselves, with the export of the spans
 * they make: the same calls the edge and the services make for a chat request (the request's server
 * span, auth, admission, the upstream attempt with its events, settlement, the ledger record: six
 * spans), every request sampled, exported over OTLP/HTTP to a local sink in its own process
 * (support/otlp-sink.ts). Compares the encodings in interleaved rounds, one process:
 * - http/protobuf (the default, telemetry/otlp-proto.ts);
 * - http/json (telemetry/otlp-json.ts).
 * Prints CPU µs per request (the calls, the encoding and the sending of the exports, a flush ends each
 * run) per round and the median; then the encoding alone (a batch of 512 such spans encoded by each
 * encoder, interleaved) and the bytes a request's spans take on the wire.
 *
 *   node --import tsx bench/tracing-calls.ts [requests per run] [--rounds N]
 *
 * Profile with `node --cpu-prof --import tsx bench/tracing-calls.ts`.
 */
import { answeredUsage } from '../src/core/usage.ts';
import { createOtelTracing } from '../src/telemetry/otel-tracing.ts';
import { OtlpJsonEncoder } from '../src/telemetry/otlp-json.ts';
import { OtlpProtoEncoder } from '../src/telemetry/otlp-proto.ts';
import { PooledRandomIds } from '../src/telemetry/random-ids.ts';
import { KIND, RecordedRequest, type SpanRecord } from '../src/telemetry/span-records.ts';
import { SPAN_NAMES, type RequestTrace, type ServerRequestFacts, type Tracing } from '../src/telemetry/trace-types.ts';
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
  chatCalls(tracing.startServerRequest(serverFacts(index)));
}

function serverFacts(index: number): ServerRequestFacts {
  return {
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
  };
}

/** The calls after the request's span started. */
function chatCalls(trace: RequestTrace): void {
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
  const sinkProcess = await startProcess('bench/support/otlp-sink.ts', [String(SINK_PORT)], {}, /listening/, 1);
  started.push(sinkProcess);
  const endpoint = `http://127.0.0.1:${SINK_PORT}/v1/traces`;
  const targets = (['http/protobuf', 'http/json'] as const).map((protocol) => ({
    protocol,
    // A queue that holds a whole run (the default 2048 would drop spans when the calls outrun the sink: not
    // what a server does, whose requests come no faster than it answers them).
    tracing: createOtelTracing(
      { endpoint, serviceName: 'switchyard', sampler: 'parentbased_always_on', headers: {}, protocol, maxQueueSize: 1_000_000 },
      { warn: (_details, message) => console.error(message) },
    ),
    runs: [] as number[],
  }));
  const measure = async (target: (typeof targets)[number], calls: number): Promise<number> => {
    const before = process.cpuUsage();
    // In slices, as requests come: the exporter's batches leave between them.
    for (let index = 0; index < calls; index++) {
      chatRequest(target.tracing, index);
      if (index % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
      // What is queued leaves now and then (a server's queue stays short: its batches leave when full).
      if (index % 500 === 499) await target.tracing.forceFlush();
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
  const jsonRuns = targets[1]!;
  for (const target of targets)
    console.log(
      `| ${target.protocol} | ${median(target.runs).toFixed(1)} | ${target.runs.map((run) => run.toFixed(1)).join(', ')} | ${median(
        target.runs.map((run, round) => run / jsonRuns.runs[round]!),
      ).toFixed(2)}x |`,
    );
  for (const target of targets) await target.tracing.shutdown();

  // The encoding alone: a full batch (512 spans, 86 requests' records) encoded by each encoder.
  const ids = new PooledRandomIds();
  const records: SpanRecord[] = [];
  const sink = { ended: (record: SpanRecord) => void records.push(record), spanId: () => ids.generateSpanId() };
  for (let index = 0; records.length < 512; index++) {
    const trace = new RecordedRequest(
      sink,
      { traceId: ids.generateTraceId(), sampled: true, traceState: undefined },
      '',
      false,
      'POST /v1/chat/completions',
      KIND.server,
    );
    trace.names.push('http.request.method', 'url.path', 'switchyard.request_id');
    trace.values.push('POST', '/v1/chat/completions', `req-${index}`);
    chatCalls(trace);
  }
  const batch = records.slice(0, 512);
  const perRequest = batch.length / 6;
  const resource = { 'service.name': 'switchyard', 'telemetry.sdk.language': 'nodejs', 'telemetry.sdk.name': 'opentelemetry' };
  const proto = new OtlpProtoEncoder(resource, 'switchyard');
  const json = new OtlpJsonEncoder(resource, 'switchyard');
  const encodeRounds = { 'http/protobuf': [] as number[], 'http/json': [] as number[] };
  const encodeBytes = { 'http/protobuf': 0, 'http/json': 0 };
  const encodeOnce = (protocol: 'http/protobuf' | 'http/json'): number =>
    protocol === 'http/protobuf' ? proto.encode(batch).length : Buffer.from(json.encode(batch)).length;
  for (let round = 0; round < rounds; round++)
    for (const protocol of ['http/protobuf', 'http/json'] as const) {
      const before = process.cpuUsage();
      for (let repeat = 0; repeat < 100; repeat++) encodeBytes[protocol] = encodeOnce(protocol);
      const used = process.cpuUsage(before);
      encodeRounds[protocol].push((used.user + used.system) / (100 * perRequest));
    }
  console.log(`\nEncoding alone: a batch of 512 spans (${perRequest.toFixed(0)} requests), ${rounds} rounds of 100 encodings`);
  console.log('| encoding | CPU µs/req (median) | per round | bytes a request |');
  console.log('|---|---:|---|---:|');
  for (const protocol of ['http/protobuf', 'http/json'] as const)
    console.log(
      `| ${protocol} | ${median(encodeRounds[protocol]).toFixed(2)} | ${encodeRounds[protocol].map((run) => run.toFixed(2)).join(', ')} | ${Math.round(encodeBytes[protocol] / perRequest)} |`,
    );
} finally {
  for (const process of started.reverse()) await process.stop();
}
