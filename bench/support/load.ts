/**
 * Load generation for benchmarks: autocannon against one URL for a fixed duration, reporting requests
 * per second and latency percentiles. The server under test runs in another process so the load
 * generator and the server do not share an event loop.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadResult {
  label: string;
  /** CPU time the server process spent per request, microseconds (Linux /proc; undefined elsewhere). */
  serverMicrosecondsPerRequest?: number;
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
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? 5,
  });
  const cpuAfter = options.serverPid === undefined ? undefined : cpuSeconds(options.serverPid);
  const perRequest =
    cpuBefore === undefined || cpuAfter === undefined || result.requests.total === 0
      ? undefined
      : Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests.total);
  return {
    label,
    ...(perRequest === undefined ? {} : { serverMicrosecondsPerRequest: perRequest }),
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
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
