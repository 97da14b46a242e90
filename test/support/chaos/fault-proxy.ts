/**
 * A TCP fault proxy in front of one dependency (Postgres, Redis, s3rver, any TCP service), on a free
 * port of 127.0.0.1, switched by the test in-process (`set`). Modes:
 *
 * - `pass`: bytes flow both ways unchanged;
 * - `blackhole`: a network partition. Connections are still accepted, nothing is forwarded either way,
 *   bytes are held; new connections are accepted and never reach the target. When the mode leaves
 *   blackhole, what was held is delivered (in order), as a healed partition would;
 * - `delay`: every chunk, each way, is delivered `delayMs` after the one before it (a slow link);
 * - `reset`: every open connection is reset (RST) at once, and every new one right after it is
 *   accepted (connection refused, as a stopped service looks).
 *
 * Generic on purpose: a suite points an instance at `proxy.port` instead of the dependency's port and
 * injects a fault with `set('blackhole')`, heals with `set('pass')`. `connections` counts what came in.
 */
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export type FaultMode = 'pass' | 'blackhole' | 'delay' | 'reset';

/** One proxied connection: the client side, the target side (once connected), and bytes held each way. */
class Link {
  target: Socket | undefined;
  /** Bytes from the client not yet written to the target, and the other way. */
  readonly toTarget: Buffer[] = [];
  readonly toClient: Buffer[] = [];
  /** Delayed writes chain here, per direction, so that order holds. */
  chainToTarget: Promise<void> = Promise.resolve();
  chainToClient: Promise<void> = Promise.resolve();
  closed = false;

  constructor(readonly client: Socket) {}

  destroy(reset: boolean): void {
    if (this.closed) return;
    this.closed = true;
    // The client side sees the fault (RST); the proxy's own connection to the target just closes
    // (resetAndDestroy on a socket still connecting left its handle open).
    if (reset && !this.client.destroyed) this.client.resetAndDestroy();
    else this.client.destroy();
    this.target?.destroy();
  }
}

export class FaultProxy {
  private modeNow: FaultMode = 'pass';
  private delayMsNow = 0;
  private readonly links = new Set<Link>();
  /** Every socket open on either side, whatever its link's state: `close()` destroys what is left. */
  private readonly sockets = new Set<Socket>();
  /** Connections accepted so far. */
  connections = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly targetHost: string,
    readonly targetPort: number,
  ) {}

  /** Listens on a free port of 127.0.0.1, forwarding to `targetHost:targetPort`. */
  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
    const started: { proxy?: FaultProxy } = {};
    const server = createServer({ noDelay: true }, (client) => started.proxy?.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    started.proxy = new FaultProxy(server, (server.address() as AddressInfo).port, targetHost, targetPort);
    return started.proxy;
  }

  get mode(): FaultMode {
    return this.modeNow;
  }

  /** `host:port` of the proxy, for URLs. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Switches the fault; `delayMs` is the per-chunk delay of `delay`. */
  set(mode: FaultMode, delayMs = 0): void {
    this.modeNow = mode;
    this.delayMsNow = delayMs;
    if (mode === 'reset') {
      for (const link of this.links) link.destroy(true);
      this.links.clear();
      return;
    }
    if (mode === 'blackhole') return;
    // pass or delay: connect the links accepted during a blackhole, deliver what was held.
    for (const link of [...this.links]) {
      if (link.client.destroyed) {
        // The client gave up during the partition: nothing to deliver.
        link.destroy(false);
        this.links.delete(link);
        continue;
      }
      if (link.target === undefined) this.connect(link);
      this.flush(link);
    }
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    for (const link of this.links) link.destroy(false);
    this.links.clear();
    for (const socket of this.sockets) socket.destroy();
    // Stops listening; every connection was destroyed above, so close's callback is not waited for.
    this.server.close();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private accept(client: Socket): void {
    this.connections++;
    this.track(client);
    if (this.modeNow === 'reset') {
      client.destroy();
      return;
    }
    const link = new Link(client);
    this.links.add(link);
    client.on('data', (chunk: Buffer) => {
      link.toTarget.push(chunk);
      this.flush(link);
    });
    client.on('error', () => this.drop(link));
    client.on('close', () => this.drop(link));
    if (this.modeNow !== 'blackhole') this.connect(link);
  }

  private connect(link: Link): void {
    const target = new Socket();
    this.track(target);
    link.target = target;
    target.setNoDelay(true);
    target.on('data', (chunk: Buffer) => {
      link.toClient.push(chunk);
      this.flush(link);
    });
    target.on('connect', () => this.flush(link));
    target.on('error', () => this.drop(link, true));
    target.on('close', () => this.drop(link));
    target.connect(this.targetPort, this.targetHost);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Writes what each side holds, unless blackholed; through the per-direction chain when delayed. */
  private flush(link: Link): void {
    if (link.closed || this.modeNow === 'blackhole' || this.modeNow === 'reset') return;
    const target = link.target;
    if (target !== undefined && !target.connecting) this.deliver(link, link.toTarget, target, 'chainToTarget');
    this.deliver(link, link.toClient, link.client, 'chainToClient');
  }

  private deliver(link: Link, held: Buffer[], to: Socket, chain: 'chainToTarget' | 'chainToClient'): void {
    while (held.length > 0) {
      const chunk = held.shift()!;
      const delayMs = this.modeNow === 'delay' ? this.delayMsNow : 0;
      if (delayMs === 0) {
        if (!to.destroyed) to.write(chunk);
        continue;
      }
      link[chain] = link[chain].then(
        () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              if (!to.destroyed && !link.closed) to.write(chunk);
              resolve();
            }, delayMs),
          ),
      );
    }
  }

  /** One side ended: end the other, unless the proxy holds bytes in a blackhole (then it waits for the heal). */
  private drop(link: Link, reset = false): void {
    if (link.closed) return;
    if (this.modeNow === 'blackhole' && !reset) return;
    link.destroy(reset);
    this.links.delete(link);
  }
}
