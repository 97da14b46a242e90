/**
 * Time to first byte of streamed answers: for `requests` sequential POSTs, the time from sending the
 * request until the first body chunk arrives, as percentiles in milliseconds.
 */
import { Agent, request } from 'undici';

export interface FirstByteResult {
  label: string;
  /** Milliseconds. */
  p50: number;
  /** Milliseconds. */
  p99: number;
  /** Milliseconds, whole stream. */
  meanTotal: number;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

export async function measureFirstByte(
  label: string,
  url: string,
  body: string,
  headers: Record<string, string>,
  requests = 200,
): Promise<FirstByteResult> {
  const dispatcher = new Agent({ connections: 1 });
  const firstBytes: number[] = [];
  let total = 0;
  try {
    for (let index = 0; index < requests + 20; index++) {
      const started = process.hrtime.bigint();
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        dispatcher,
      });
      let first: bigint | undefined;
      for await (const _chunk of response.body) first ??= process.hrtime.bigint();
      const ended = process.hrtime.bigint();
      // The first 20 requests warm up connections and JIT.
      if (index >= 20 && first !== undefined) {
        firstBytes.push(Number(first - started) / 1e6);
        total += Number(ended - started) / 1e6;
      }
    }
  } finally {
    await dispatcher.close();
  }
  firstBytes.sort((a, b) => a - b);
  const round = (value: number): number => Math.round(value * 1000) / 1000;
  return {
    label,
    p50: round(percentile(firstBytes, 0.5)),
    p99: round(percentile(firstBytes, 0.99)),
    meanTotal: round(total / firstBytes.length),
  };
}

export function printFirstByteTable(title: string, rows: FirstByteResult[]): void {
  console.log(`\n${title}`);
  console.log('| run | TTFB p50 ms | TTFB p99 ms | mean whole stream ms |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) console.log(`| ${row.label} | ${row.p50} | ${row.p99} | ${row.meanTotal} |`);
}
