/**
 * CPU time this process spends per call of an asynchronous operation, with a fixed number of calls in
 * flight: the figure of the in-process benchmarks (generation-pipeline, gateway-in-process, the undici
 * client loop), steadier than requests per second on a small shared machine.
 */

/** CPU microseconds (user + system, this process) per call over `calls` calls, `concurrency` in flight. */
export async function cpuMicrosecondsPerCall(call: () => Promise<unknown>, calls: number, concurrency = 50): Promise<number> {
  const before = process.cpuUsage();
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < calls) {
        started++;
        await call();
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}
