/**
 * A TCP fault proxy for chaos tests (issue 39): clients connect to `port`, the proxy connects each
 * to the current `target` and copies bytes both ways, unless a fault is on:
 *
 * - `blackhole`: every connection, open or new, is held open and nothing more passes either way (a
 *   frozen server or a cut network: the kernel still accepts);
 * - `reset`: open connections are reset (RST) and new ones are reset as they arrive;
 * - `delay`: each chunk, either way, waits `delayMs` before it passes; with `trickleBytesPerSecond` the
 *   bytes from the server dribble out at that rate (a slow store);
 * - `failover(port)`: new connections go to another server; open ones are stranded, held open with
 *   nothing passing ever again (the old server vanished without a word: the worst case for a pool).
 *
 * Bytes are never dropped: a held chunk passes when the fault heals, in order.
 *
 * Self-contained: node:net only.
 */
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export type FaultMode = 'pass' | 'blackhole' | 'reset' | 'delay';

export interface DelayFault {
  /** Milliseconds each chunk waits, either way. */
  delayMs: number;
  /** Server-to-client bytes per second (undefined: as fast as they come after the delay). */
  trickleBytesPerSecond?: number;
}

interface Pair {
  client: Socket;
  server: Socket;
  stranded: boolean;
}

export class FaultProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<Pair>();
  private mode: FaultMode = 'pass';
  private delay: DelayFault = { delayMs: 0 };
  /** Resolves when the blackhole ends (held chunks wait on it). */
  private gate: Promise<void> = Promise.resolve();
  private openGate: () => void = () => undefined;
  /** Connections accepted since start (tests: a fresh probe connection shows here). */
  accepted = 0;

  private constructor(
    private targetPort: number,
    private readonly targetHost: string,
  ) {}

  /** Starts a proxy on a free port of 127.0.0.1 in front of `targetHost:targetPort`. */
  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
    const proxy = new FaultProxy(targetPort, targetHost);
    const server = createServer((client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy.server = server;
    return proxy;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  get current(): FaultMode {
    return this.mode;
  }

  /** `host:port` of the proxy, for URLs. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Connections accepted so far (the batch suites' name for `accepted`). */
  get connections(): number {
    return this.accepted;
  }

  /** Switches the fault by name; `delayMs` is the per-chunk delay of `delay`. */
  set(mode: FaultMode, delayMs = 0): void {
    if (mode === 'pass') this.pass();
    else if (mode === 'blackhole') this.blackhole();
    else if (mode === 'reset') this.reset();
    else this.slow({ delayMs });
  }

  /** Connections open through the proxy. */
  get open(): number {
    return this.pairs.size;
  }

  pass(): void {
    this.mode = 'pass';
    this.openGate();
  }

  blackhole(): void {
    if (this.mode !== 'blackhole') this.gate = new Promise((resolve) => (this.openGate = resolve));
    this.mode = 'blackhole';
  }

  reset(): void {
    this.mode = 'reset';
    for (const pair of [...this.pairs]) this.resetPair(pair);
  }

  slow(fault: DelayFault): void {
    this.mode = 'delay';
    this.delay = fault;
    this.openGate();
  }

  /** New connections go to `port` from now on; open ones are stranded (see above). */
  failover(port: number): void {
    this.targetPort = port;
    for (const pair of this.pairs) pair.stranded = true;
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.resetPair(pair);
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }

  private accept(client: Socket): void {
    this.accepted++;
    client.on('error', () => undefined);
    if (this.mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const server = new Socket();
    server.on('error', () => undefined);
    const pair: Pair = { client, server, stranded: false };
    this.pairs.add(pair);
    const forget = (): void => {
      if (!this.pairs.delete(pair)) return;
      client.destroy();
      server.destroy();
    };
    client.on('close', forget);
    server.on('close', forget);
    server.connect(this.targetPort, this.targetHost);
    this.pipe(pair, client, server, false);
    this.pipe(pair, server, client, true);
  }

  /** Copies `from` to `to` through the current fault; `fromServer` marks the server-to-client way. */
  private pipe(pair: Pair, from: Socket, to: Socket, fromServer: boolean): void {
    // Chunks pass one after another: a held or delayed chunk never lets a later one overtake it.
    let queue = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      from.pause();
      queue = queue
        .then(async () => {
          // Held while the blackhole lasts; a stranded connection forever.
          while (this.mode === 'blackhole' || pair.stranded) {
            if (pair.stranded) return new Promise<void>(() => undefined);
            await this.gate;
          }
          if (this.mode !== 'delay') return write(to, chunk);
          const { delayMs, trickleBytesPerSecond } = this.delay;
          await sleep(delayMs);
          if (!fromServer || trickleBytesPerSecond === undefined) return write(to, chunk);
          // A slow store: the bytes dribble out, a few at a time.
          const step = Math.max(1, Math.floor(trickleBytesPerSecond / 10));
          for (let offset = 0; offset < chunk.length && !to.destroyed; offset += step) {
            await write(to, chunk.subarray(offset, offset + step));
            await sleep(100);
          }
        })
        .finally(() => from.resume());
    });
    from.on('end', () => void queue.then(() => to.end()));
  }

  private resetPair(pair: Pair): void {
    this.pairs.delete(pair);
    pair.client.resetAndDestroy();
    pair.server.resetAndDestroy();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function write(socket: Socket, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    socket.write(chunk, () => resolve());
  });
}
