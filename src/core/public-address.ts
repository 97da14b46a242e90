/**
 * Which IP addresses count as public: an address Switchyard may connect to on someone else's say-so
 * (an image backend's `url` result, an organization's alert webhook). Not public: the special-purpose ranges of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and its updates): loopback, private (RFC 1918) and
 * unique-local, link-local (which holds the cloud metadata address 169.254.169.254), carrier-grade NAT
 * (100.64.0.0/10), "this network", documentation, benchmarking, multicast and reserved space, and IPv6
 * forms that carry an IPv4 address (IPv4-mapped: checked by the IPv4 rules; NAT64, 6to4, Teredo: refused).
 *
 * Node's `net.BlockList` does the matching (its IPv4 rules also match IPv4-mapped IPv6 addresses).
 *
 * `guardedLookup` applies a rule where it cannot be dodged: as the connection's own DNS lookup, so the
 * address checked is the address connected to (a name that resolves differently a second time, DNS
 * rebinding, cannot swap in another). Both the providers' guarded downloads and the alert webhooks
 * connect through it.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** [network, prefix length] per family. */
const IPV4_NOT_PUBLIC: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];
const IPV6_NOT_PUBLIC: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64 (carries an IPv4 address)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo (carries an IPv4 address)
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (carries an IPv4 address)
  ['fc00::', 7], // unique local (AWS's metadata fd00:ec2::254 too)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const notPublic = new BlockList();
for (const [network, prefix] of IPV4_NOT_PUBLIC) notPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_NOT_PUBLIC) notPublic.addSubnet(network, prefix, 'ipv6');

/** True for a public unicast IPv4 or IPv6 address; false for any special-purpose one and for non-addresses. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !notPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The error a guarded lookup fails a connection with (`code` `ENOTPUBLIC`); its message names no host or address. */
export class AddressNotAllowedError extends Error {
  readonly code = 'ENOTPUBLIC';
  constructor() {
    super('the URL resolves to an address that is not public');
    this.name = 'AddressNotAllowedError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves as usual and hands over only the addresses `allow` accepts. */
export function guardedLookup(allow: (address: string) => boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, []);
      const allowed = addresses.filter((entry) => allow(entry.address));
      if (allowed.length === 0) return callback(new AddressNotAllowedError(), []);
      if (options.all === true) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** The host of a URL as an address literal (IPv6 without its brackets), or undefined for a name. */
export function addressLiteralOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? undefined : host;
}

/** True when `error` or one of its causes (at most five deep) is a guarded lookup's refusal. */
export function isAddressRefusal(error: unknown): boolean {
  let current: unknown = error;
  for (let hops = 0; current !== undefined && current !== null && hops < 5; hops++) {
    if (current instanceof AddressNotAllowedError) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
