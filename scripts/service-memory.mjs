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
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=50'];
export const SERVICE_MALLOC_ENVIRONMENT = { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };
