/**
 * Promises per request on the generation pipeline, counted rather than timed: the same in-process
 * pipeline as bench/generation-pipeline.ts (support/in-process-pipeline.ts), with an async_hooks
 * PROMISE counter on while 100 requests of each format run one after another. Each promise is an
 * allocation and a microtask, and every async function, `await` and async-generator layer makes some;
 * unlike CPU time on this machine, the count does not move between runs, so it shows what a change
 * to the pipeline's shape did at once (a JSON chat request made ~90 before the cap and the meter
 * became stages of the service's loop, ~60 after). Beside it, the baseline: what parsing and
 * re-encoding the same answer makes. `--sites` lists where the promises of each row are created (the
 * first `src/` frame of each creation stack).
 *
 *   node --import tsx bench/pipeline-promises.ts [--sites]
 */
import { createHook } from 'node:async_hooks';
import { GENERATION_CASES } from './support/generation-cases.ts';
import { closePipeline, ENDPOINTS, throughBaseline, throughPipeline } from './support/in-process-pipeline.ts';

const REQUESTS = 100;
const showSites = process.argv.includes('--sites');

let counting = false;
let count = 0;
const sites = new Map<string, number>();
const hook = createHook({
  init(_asyncId, type) {
    if (!counting || type !== 'PROMISE') return;
    count++;
    if (!showSites) return;
    const frame = (new Error().stack ?? '').split('\n').find((line) => line.includes('/src/'));
    const site = frame === undefined ? '(no src/ frame: node or a dependency)' : frame.replace(/.*\/src\//, 'src/').replace(/\)$/, '');
    sites.set(site, (sites.get(site) ?? 0) + 1);
  },
});

/** Promises made per call of `run`, after a warm-up. */
async function promisesPerCall(run: () => Promise<number>): Promise<number> {
  for (let index = 0; index < 200; index++) await run();
  count = 0;
  sites.clear();
  counting = true;
  for (let index = 0; index < REQUESTS; index++) await run();
  counting = false;
  return count / REQUESTS;
}

function printSites(label: string): void {
  if (!showSites) return;
  console.log(`\n${label}: where the promises are made, per request`);
  for (const [site, made] of [...sites].sort((left, right) => right[1] - left[1]).slice(0, 25))
    console.log(`${(made / REQUESTS).toFixed(1).padStart(6)}  ${site}`);
}

hook.enable();
const rows: string[] = [];
for (const stream of [false, true]) {
  const baseline = await promisesPerCall(() => throughBaseline(stream));
  for (const testCase of GENERATION_CASES) {
    const pipeline = await promisesPerCall(() => throughPipeline(ENDPOINTS[testCase.path], testCase.body(stream)));
    printSites(`${testCase.format}, ${stream ? 'stream' : 'JSON'}`);
    rows.push(`| ${testCase.format}, ${stream ? 'stream' : 'JSON'} | ${baseline.toFixed(1)} | ${pipeline.toFixed(1)} |`);
  }
}
hook.disable();
console.log(`\nPromises per request, in process, ${REQUESTS} requests per row one after another (async_hooks PROMISE inits)`);
console.log('| path | baseline (parse + re-encode) | switchyard pipeline |');
console.log('|---|---:|---:|');
for (const row of rows) console.log(row);
await closePipeline();
process.exit(0);
