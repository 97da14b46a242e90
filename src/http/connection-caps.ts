/**
 * Connection caps on the public listener: at most `maxConnections` open at once (Node's
 * `server.maxConnections`: more are closed on arrival), and at most `maxConnectionsPerAddress` from one
 * client address (the TCP peer; behind a proxy that is the proxy, so raise or turn it off there). A
 * connection over a cap is destroyed before any byte is read, and counted in one info line per address
 * and minute rather than one per connection. 0 turns a cap off.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionCapOptions {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

export interface CapLog {
  info(object: object, message: string): void;
}

export function installConnectionCaps(server: Server, options: ConnectionCapOptions, log: CapLog): void {
  if (options.maxConnections > 0) server.maxConnections = options.maxConnections;
  if (options.maxConnectionsPerAddress <= 0) return;
  const open = new Map<string, number>();
  const lastLogged = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = (open.get(address) ?? 0) + 1;
    if (count > options.maxConnectionsPerAddress) {
      const now = Date.now();
      if ((lastLogged.get(address) ?? 0) < now - 60_000) {
        lastLogged.set(address, now);
        if (lastLogged.size > 10_000) lastLogged.clear();
        log.info({ address, maxConnectionsPerAddress: options.maxConnectionsPerAddress }, 'too many connections from one address: closed');
      }
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
