// Guarded downloads of upstream-supplied URLs (providers/shared/guarded-download.ts, core/public-address.ts):
// which addresses are public, DNS names checked after resolution, redirects bounded and each hop
// checked again. Real HTTP servers on 127.0.0.1 and 127.0.0.2 (both loopback on Linux) stand in for a
// permitted and a forbidden host, with an address policy that allows only the first.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { guardedDownload, GuardedDownloadError } from '../../../src/providers/shared/guarded-download.ts';
import { isPublicAddress } from '../../../src/core/public-address.ts';

describe('isPublicAddress', () => {
  test('loopback, private, link-local, CGNAT, metadata and IPv6 forms of them are not public', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.255',
      '192.0.2.1',
      '198.18.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'ff02::1',
      '2001:db8::1',
      'localhost',
      '',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });

  test('public unicast addresses are public', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });
});

describe('guardedDownload', () => {
  const servers: Server[] = [];
  const hits: string[] = [];
  let allowedOrigin = '';
  let forbiddenOrigin = '';
  const onlyFirstHost = (address: string): boolean => address === '127.0.0.1';
  const options = (extra: Partial<Parameters<typeof guardedDownload>[1]> = {}) => ({
    signal: new AbortController().signal,
    timeoutMs: 5_000,
    maxBytes: 1024,
    allowAddress: onlyFirstHost,
    ...extra,
  });

  async function listen(host: string, handler: Parameters<typeof createServer>[1]): Promise<string> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  }

  before(async () => {
    forbiddenOrigin = await listen('127.0.0.2', (request, response) => {
      hits.push(`forbidden ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
    });
    allowedOrigin = await listen('127.0.0.1', (request, response) => {
      hits.push(`allowed ${request.url}`);
      const url = request.url ?? '';
      if (url === '/image') response.writeHead(200, { 'content-type': 'image/png; charset=binary' }).end('png bytes');
      else if (url === '/to-forbidden') response.writeHead(302, { location: `${forbiddenOrigin}/secret` }).end();
      else if (url === '/to-file') response.writeHead(302, { location: 'file:///etc/passwd' }).end();
      else if (url.startsWith('/loop/')) response.writeHead(307, { location: `/loop/${Number(url.slice(6)) + 1}` }).end();
      else if (url === '/hop') response.writeHead(301, { location: '/image' }).end();
      else if (url === '/big') response.writeHead(200).end('x'.repeat(4096));
      else response.writeHead(404).end();
    });
  });
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('an allowed host is downloaded, one allowed redirect followed; the content type is kept without parameters', async () => {
    const downloaded = await guardedDownload(`${allowedOrigin}/hop`, options());
    assert.equal(downloaded.bytes.toString(), 'png bytes');
    assert.equal(downloaded.contentType, 'image/png');
  });

  test('a forbidden address is refused before any request: literal, by name after resolution, and by default policy', async () => {
    hits.length = 0;
    await assert.rejects(guardedDownload(`${forbiddenOrigin}/secret`, options()), GuardedDownloadError);
    // `localhost` resolves to 127.0.0.1 (or ::1): refused by the default public-address rule.
    const publicOnly = { signal: new AbortController().signal, timeoutMs: 5_000, maxBytes: 1024 };
    await assert.rejects(guardedDownload(`http://localhost:${new URL(allowedOrigin).port}/image`, publicOnly), /not public/);
    await assert.rejects(guardedDownload(`${allowedOrigin}/image`, publicOnly), /not public/);
    assert.deepEqual(hits, []);
  });

  test('each redirect is checked again: to a forbidden address or scheme, refused', async () => {
    hits.length = 0;
    await assert.rejects(guardedDownload(`${allowedOrigin}/to-forbidden`, options()), /not public/);
    await assert.rejects(guardedDownload(`${allowedOrigin}/to-file`, options()), /not http\(s\)/);
    assert.ok(!hits.some((hit) => hit.startsWith('forbidden')), hits.join(', '));
  });

  test('redirects are bounded (3 by default) and bodies by maxBytes', async () => {
    hits.length = 0;
    await assert.rejects(guardedDownload(`${allowedOrigin}/loop/0`, options()), /redirects more than 3 times/);
    assert.equal(hits.length, 4);
    await assert.rejects(guardedDownload(`${allowedOrigin}/big`, options()), /larger than 1024 bytes/);
    await assert.rejects(guardedDownload(`${allowedOrigin}/missing`, options()), (error: GuardedDownloadError) => error.status === 404);
  });
});
