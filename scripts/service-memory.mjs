// The service's memory settings, used by `npm start` (scripts/start.mjs) and by the benchmarks that
// start the compiled server (bench/support/processes.ts), so both run it the same way.
// Memory, measured with bench/server-flags.ts (50 connections of streamed and JSON generation, paired
// runs against V8's defaults): peak resident size 178-183 MB instead of 266-269 MB for 1-5% more CPU.
// - a young generation of 8 MB semi-spaces (16 MB by default on this size of machine);
// - the old generation may grow to 2x what the last full collection kept (V8 allows up to 4x);
// - glibc returns freed memory above 128 KiB to the system instead of keeping it for reuse (module
//   parsing at start leaves ~30 MB of freed but resident malloc memory otherwise). Ignored elsewhere.
// Tighter settings cost more than they save: 1.5x growth gave 168 MB for ~9% more CPU (README, Memory).
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100'];
export const SERVICE_MALLOC_ENVIRONMENT = { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };
