// The service's memory settings, used by `npm start` (scripts/start.mjs) and by the benchmarks that
// start the compiled server (bench/support/processes.ts), so both run it the same way.
// Memory, measured with bench/server-flags.ts (50 connections of streamed and JSON generation, paired
// runs; README, "Memory"): peak resident size ~150 MB instead of 266-269 MB with V8's defaults.
// - a young generation of 8 MB semi-spaces (16 MB by default on this size of machine);
// - the old generation may grow to 1.5x what the last full collection kept (V8 allows up to 4x):
//   165 MB peak at 2x, 149-152 MB at 1.5x, for no CPU difference measurable in paired runs;
// - glibc returns freed memory above 128 KiB to the system instead of keeping it for reuse (module
//   parsing at start leaves ~30 MB of freed but resident malloc memory otherwise). Ignored elsewhere.
// Tighter settings cost more than they save: 1.25x growth gave 150 MB for ~5% more CPU, 4 MB semi-spaces
// the same peak for 6-13% more.
//
// Young-generation collections run on the main thread alone when the service has one CPU to run on
// (`PARALLEL_SCAVENGE`, default `auto`). V8 otherwise splits every scavenge between the main thread
// and a helper thread; with one CPU the two take turns on it, and the split only adds the cost of
// dividing the work: 8% less CPU per request without it (median pair 0.924 over 24 paired runs,
// every format, with the service pinned to one core; README, "Memory"). With more CPUs the helper
// runs beside the main thread and shortens its pauses, so V8's default stays.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=50'];
export const SERVICE_MALLOC_ENVIRONMENT = { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };

export const PARALLEL_SCAVENGE_SETTINGS = ['auto', 'on', 'off'];

/** The CPUs a control group's quota allows (cgroup v2 `cpu.max`, else v1's CFS files), or undefined when unlimited or unknown. */
function cgroupCpuQuota() {
  const read = (path) => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  let quota;
  let period;
  const v2 = read('/sys/fs/cgroup/cpu.max');
  if (v2 !== undefined) [quota, period] = v2.split(/\s+/);
  else [quota, period] = [read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'), read('/sys/fs/cgroup/cpu/cpu.cfs_period_us')];
  const cpus = Number(quota) / Number(period);
  return Number.isFinite(cpus) && cpus > 0 ? cpus : undefined;
}

/** How many CPUs this process may run on: its affinity (e.g. `taskset`), lowered by a container's CPU quota. */
export function cpuBudget() {
  const quota = cgroupCpuQuota();
  const parallelism = availableParallelism();
  return quota === undefined ? parallelism : Math.max(1, Math.min(parallelism, Math.ceil(quota)));
}

/**
 * The node flags for a service that may use `cpus` CPUs. `parallelScavenge`: `auto` (parallel only with
 * more than one CPU), `on` or `off`. Throws on any other value.
 */
export function serviceNodeFlags(cpus = cpuBudget(), parallelScavenge = process.env.PARALLEL_SCAVENGE ?? 'auto') {
  if (!PARALLEL_SCAVENGE_SETTINGS.includes(parallelScavenge))
    throw new Error(`PARALLEL_SCAVENGE must be one of ${PARALLEL_SCAVENGE_SETTINGS.join(', ')}; got '${parallelScavenge}'.`);
  const parallel = parallelScavenge === 'auto' ? cpus > 1 : parallelScavenge === 'on';
  return parallel ? [...SERVICE_NODE_FLAGS] : [...SERVICE_NODE_FLAGS, '--no-parallel-scavenge'];
}
