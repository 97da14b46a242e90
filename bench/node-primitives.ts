/**
 * What the primitives on the generation path cost on this Node: one request creates two AbortSignals
 * (the client's, at the edge, and each upstream attempt's), adds and removes abort listeners, arms a
 * watchdog timer, creates a few Maps, and passes its parts through a chain of async-generator stages.
 * Each figure is printed beside a baseline measured in the same run, so the question "is this the
 * lever?" can be asked again on another Node version: on Node 20 creating an AbortSignal costs tens of
 * times an EventTarget, while a pass-through async-generator stage costs well under a microsecond.
 *
 *   node --import tsx bench/node-primitives.ts
 */
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
