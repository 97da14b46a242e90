/**
 * The origin (scheme, host, port) clients reach this service at, for links they follow later (signed
 * file links of generated images). The `Host` header is never believed on its own: anyone can send
 * any Host, and a link built from it would point the client at the sender's server.
 *
 * 1. `server.publicBaseUrl` (PUBLIC_BASE_URL) when set: the right answer behind any load balancer.
 * 2. else, with `server.trustProxy` (TRUST_PROXY) set, the forwarded scheme and host
 *    (`X-Forwarded-Proto`/`-Host`, read by Fastify only from trusted proxies), else `Host`.
 * 3. else the address the connection actually arrived at (`http://<local address>:<port>`): correct
 *    for a client on the same network, and never controlled by the client.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface PublicOriginSettings {
  publicBaseUrl?: string | undefined;
  trustProxy: boolean | number | string | readonly string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Scheme, host and port (and base path) for links sent to the client, without a trailing slash. */
    publicOrigin(): string;
  }
}

function trustsProxy(trustProxy: PublicOriginSettings['trustProxy']): boolean {
  if (typeof trustProxy === 'number') return trustProxy > 0;
  if (typeof trustProxy === 'string') return trustProxy !== '';
  if (Array.isArray(trustProxy)) return trustProxy.length > 0;
  return trustProxy === true;
}

/** The local end of the connection, as `http://host:port` (IPv6 in brackets, IPv4-mapped unwrapped). */
function arrivalOrigin(request: FastifyRequest): string {
  const socket = request.raw.socket;
  const address = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${socket.localPort ?? 80}`;
}

export function publicOriginOf(request: FastifyRequest, settings: PublicOriginSettings): string {
  if (settings.publicBaseUrl !== undefined) return settings.publicBaseUrl.replace(/\/+$/, '');
  if (trustsProxy(settings.trustProxy)) return `${request.protocol}://${request.host}`;
  return arrivalOrigin(request);
}

/** Adds `request.publicOrigin()` under the policy above. */
export function installPublicOrigin(app: FastifyInstance, settings: PublicOriginSettings): void {
  app.decorateRequest('publicOrigin', function publicOrigin(this: FastifyRequest): string {
    return publicOriginOf(this, settings);
  });
}

/** The setting as Fastify's `trustProxy` option: a hop count becomes "trust the nearest N hops". */
export function fastifyTrustProxy(
  trustProxy: PublicOriginSettings['trustProxy'],
): boolean | string | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trustProxy === 'number') return (_address: string, hop: number) => hop < trustProxy;
  if (typeof trustProxy === 'boolean' || typeof trustProxy === 'string') return trustProxy;
  return [...trustProxy];
}
