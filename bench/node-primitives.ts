/**
 * What the primitives on the generation path cost on this Node: one request creates two AbortSignals
 * (the client's, at the edge, and each upstream attempt's), adds and removes abort listeners, arms a
 * watchdog timer, creates a few Maps, and passes its parts through a chain of async-generator stages.
 * Each figure is printed beside a baseline measured in the same run, so the question "is this the
 * lever?" can be asked again on another Node version: on Node 20 creating an AbortSignal costs tens of
 * times an EventTarget, while a pass-through async-generator stage costs well under a microsecond.
 * Also priced: an object literal with a computed `[Symbol.asyncIterator]` key against a class (V8 builds
 * the literal on a slow path; core/batched.ts made one per stage), and a streaming TextDecoder against
 * Node's StringDecoder for one upstream answer (the SSE parser made one per stream).
 *
 *   node --import tsx bench/node-primitives.ts
 */
import { StringDecoder } from 'node:string_decoder';
import { cannedChatAnswer } from './support/canned-chat-answer.ts';

const OPERATIONS = 200_000;

let sink: unknown;

function nanosecondsPerOperation(operation: () => void): number {
  for (let index = 0; index < OPERATIONS / 10; index++) operation();
  const started = process.hrtime.bigint();
  for (let index = 0; index < OPERATIONS; index++) operation();
  return Number(process.hrtime.bigint() - started) / OPERATIONS;
}

async function* source(): AsyncGenerator<number[]> {
  await null;
  yield [1, 2, 3];
}

async function* passThrough(batches: AsyncIterable<number[]>): AsyncGenerator<number[]> {
  for await (const batch of batches) yield batch;
}

/** CPU ns per single-batch stream read through `stages` pass-through stages, 50 streams in flight. */
async function streamNanoseconds(stages: number): Promise<number> {
  const read = async (): Promise<void> => {
    let stream: AsyncIterable<number[]> = source();
    for (let stage = 0; stage < stages; stage++) stream = passThrough(stream);
    for await (const batch of stream) sink = batch;
  };
  for (let index = 0; index < 20_000; index++) await read();
  const streams = 100_000;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      for (let index = 0; index < streams / 50; index++) await read();
    }),
  );
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / streams;
}

const rows: Array<[string, number, string]> = [];
const eventTarget = nanosecondsPerOperation(() => (sink = new EventTarget()));
rows.push(['new EventTarget() (baseline)', eventTarget, '']);
const signal = nanosecondsPerOperation(() => (sink = new AbortController().signal));
rows.push(['new AbortController().signal', signal, `${(signal / eventTarget).toFixed(0)}x the baseline`]);
const listener = (): void => undefined;
const listened = nanosecondsPerOperation(() => {
  const created = new AbortController().signal;
  created.addEventListener('abort', listener, { once: true });
  created.removeEventListener('abort', listener);
  sink = created;
});
rows.push(['  + add and remove one abort listener', listened - signal, '']);
rows.push(['setTimeout + clearTimeout', nanosecondsPerOperation(() => clearTimeout(setTimeout(listener, 1000))), '']);
rows.push(['new Map() with one entry', nanosecondsPerOperation(() => (sink = new Map([['a', 1]]))), '']);
// An async iterable as an object literal (a computed symbol key) or as a class instance: one per stage.
class Iterable {
  constructor(private readonly produce: () => number) {}
  [Symbol.asyncIterator](): number {
    return this.produce();
  }
}
const produce = (): number => 1;
const classInstance = nanosecondsPerOperation(() => (sink = new Iterable(produce)));
rows.push(['an async iterable as a class instance (baseline)', classInstance, '']);
const literal = nanosecondsPerOperation(() => (sink = { batches: produce, [Symbol.asyncIterator]: () => produce() }));
rows.push(['  as an object literal with a computed symbol key', literal, `${(literal / classInstance).toFixed(0)}x the baseline`]);
// Decoding one streamed upstream answer (the benchmarks' 20-delta answer) with a decoder made per stream.
const answer = Buffer.from(cannedChatAnswer(20, 0).stream);
const stringDecoder = nanosecondsPerOperation(() => {
  const decoder = new StringDecoder('utf8');
  sink = decoder.write(answer) + decoder.end();
});
rows.push(['decode a streamed answer with a new StringDecoder (baseline)', stringDecoder, '']);
const textDecoder = nanosecondsPerOperation(() => {
  const decoder = new TextDecoder('utf-8');
  sink = decoder.decode(answer, { stream: true }) + decoder.decode();
});
rows.push(['  with a new streaming TextDecoder', textDecoder, `${(textDecoder / stringDecoder).toFixed(1)}x the baseline`]);
const direct = await streamNanoseconds(0);
rows.push(['a one-batch async-generator stream (baseline)', direct, '']);
for (const stages of [1, 3, 6]) {
  const staged = await streamNanoseconds(stages);
  rows.push([`  through ${stages} pass-through stage(s)`, staged, `${((staged - direct) / stages).toFixed(0)} ns per stage`]);
}

console.log(`Node ${process.version}: ns per operation`);
console.log('| operation | ns | |');
console.log('|---|---:|---|');
for (const [name, figure, note] of rows) console.log(`| ${name} | ${figure.toFixed(0)} | ${note} |`);
if (sink === undefined) console.log('');
