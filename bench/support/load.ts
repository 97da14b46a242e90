/**
 * Load generation for benchmarks: autocannon against one URL for a fixed duration, reporting requests
 * per second and latency percentiles. The server under test runs in another process so the load
 * generator and the server do not share an event loop.
 */
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadResult {
  label: string;
  /** CPU time the server process spent per request, microseconds (Linux /proc; undefined elsewhere). */
  serverMicrosecondsPerRequest?: number;
  /** The same, by thread and mode (Linux /proc): where a server's CPU goes. */
  serverCpuSplit?: CpuSplit;
  requestsPerSecond: number;
  /** Milliseconds. */
  p50: number;
  /** Milliseconds. */
  p99: number;
  non2xx: number;
  errors: number;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  durationSeconds?: number;
}

/**
 * A server's CPU per request by thread, microseconds: its main thread in user mode (JavaScript, V8's
 * work on that thread, including its share of garbage collection, and native code such as the HTTP
 * parser) and in kernel mode (mostly socket reads and writes), and every other thread together (V8's
 * helper threads: concurrent marking, parallel scavenging, background compilation; libuv's pool).
 * A thread that ended during the run is missing from the split (the process total still counts it).
 */
export interface CpuSplit {
  mainUser: number;
  mainKernel: number;
  otherThreads: number;
}

/** CPU seconds of a process by thread and mode (Linux), or undefined. */
function cpuByThread(pid: number): CpuSplit | undefined {
  try {
    const split: CpuSplit = { mainUser: 0, mainKernel: 0, otherThreads: 0 };
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      let fields: string[];
      try {
        fields = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8').split(') ')[1]!.split(' ');
      } catch {
        continue; // a thread that ended between the listing and the read
      }
      const user = Number(fields[11]) / 100;
      const kernel = Number(fields[12]) / 100;
      if (thread === String(pid)) {
        split.mainUser += user;
        split.mainKernel += kernel;
      } else split.otherThreads += user + kernel;
    }
    return split;
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds a process has used (Linux), or undefined. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Runs the load; with `serverPid`, also the server's CPU time per request (a steadier figure than req/s on a small shared machine). */
export async function runLoad(label: string, options: LoadOptions & { serverPid?: number }): Promise<LoadResult> {
  const cpuBefore = options.serverPid === undefined ? undefined : cpuSeconds(options.serverPid);
  const splitBefore = options.serverPid === undefined ? undefined : cpuByThread(options.serverPid);
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? 5,
  });
  const cpuAfter = options.serverPid === undefined ? undefined : cpuSeconds(options.serverPid);
  const splitAfter = options.serverPid === undefined ? undefined : cpuByThread(options.serverPid);
  const perRequest =
    cpuBefore === undefined || cpuAfter === undefined || result.requests.total === 0
      ? undefined
      : Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests.total);
  return {
    label,
    ...(perRequest === undefined ? {} : { serverMicrosecondsPerRequest: perRequest }),
    ...(splitBefore === undefined || splitAfter === undefined || result.requests.total === 0
      ? {}
      : { serverCpuSplit: perRequestSplit(splitBefore, splitAfter, result.requests.total) }),
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

function perRequestSplit(before: CpuSplit, after: CpuSplit, requests: number): CpuSplit {
  const each = (key: keyof CpuSplit): number => Math.round(((after[key] - before[key]) * 1e6) / requests);
  return { mainUser: each('mainUser'), mainKernel: each('mainKernel'), otherThreads: each('otherThreads') };
}

export function printTable(title: string, rows: LoadResult[]): void {
  console.log(`\n${title}`);
  console.log('| run | req/s | p50 ms | p99 ms | server CPU µs/req | non-2xx | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.label} | ${row.requestsPerSecond} | ${row.p50} | ${row.p99} | ${row.serverMicrosecondsPerRequest ?? '-'} | ${row.non2xx} | ${row.errors} |`,
    );
  }
}
