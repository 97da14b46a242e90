// Registering and reaching a webhook URL (services/alerts/webhook-url.ts, webhook-sender.ts). At
// registration: names that resolve only to private addresses are refused like private literals, a
// name that does not resolve now is accepted. At delivery, against real HTTP servers on 127.0.0.1:
// without the private-address setting nothing on the loopback is connected to, by literal or by name
// (the check is the connection's own DNS lookup); with it, an attempt is bounded by the timeout,
// redirects are not followed, a 429's retry-after is read, and no failure names the URL.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { isServiceError } from '../../../src/core/service-error.ts';
import { checkWebhookUrl } from '../../../src/services/alerts/webhook-url.ts';
import { WebhookSender } from '../../../src/services/alerts/webhook-sender.ts';

const strict = { allowHttp: false, allowPrivateAddresses: false };

async function refusal(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return `${error.param}: ${error.message}`;
    throw error;
  }
  return null;
}

describe('webhook URLs at registration', () => {
  test('a name resolving only to private addresses is refused; one that does not resolve now is accepted', async () => {
    const resolver = async (host: string) =>
      ({ 'intranet.example': ['10.0.0.7', 'fd00::7'], 'mixed.example': ['10.0.0.7', '93.184.215.14'], 'gone.example': [] })[host] ?? [];
    assert.match((await refusal(checkWebhookUrl('https://intranet.example/hook', strict, resolver)))!, /^url: .*private/);
    assert.equal(await checkWebhookUrl('https://mixed.example/hook', strict, resolver), 'https://mixed.example/hook');
    assert.equal(await checkWebhookUrl('https://gone.example/hook', strict, resolver), 'https://gone.example/hook');
    assert.equal(await checkWebhookUrl('HTTPS://Hooks.Example:443/a?b=c', strict, resolver), 'https://hooks.example/a?b=c');
  });

  test('the settings open http:// and private addresses, each on its own', async () => {
    const none = async () => [];
    assert.match((await refusal(checkWebhookUrl('http://hooks.example/x', { ...strict, allowPrivateAddresses: true }, none)))!, /https/);
    assert.equal(await checkWebhookUrl('http://hooks.example/x', { ...strict, allowHttp: true }, none), 'http://hooks.example/x');
    assert.match((await refusal(checkWebhookUrl('http://127.0.0.1/x', { ...strict, allowHttp: true }, none)))!, /private/);
    assert.equal(await checkWebhookUrl('https://127.0.0.1:9/x', { ...strict, allowPrivateAddresses: true }, none), 'https://127.0.0.1:9/x');
  });
});

describe('webhook delivery', () => {
  let server: Server;
  let origin = '';
  const hits: string[] = [];

  before(async () => {
    server = createServer((request, response) => {
      hits.push(request.url ?? '');
      if (request.url === '/ok') response.writeHead(204).end();
      else if (request.url === '/redirect') response.writeHead(307, { location: '/ok' }).end();
      else if (request.url === '/busy') response.writeHead(429, { 'retry-after': '7' }).end();
      else if (request.url === '/hang')
        return; // never answers (the connection is closed with the server)
      else response.writeHead(500).end('x'.repeat(100_000));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const never = new AbortController().signal;

  test('without the private-address setting the loopback is never connected to, by address or by name', async () => {
    const sender = new WebhookSender({ allowHttp: true, allowPrivateAddresses: false, timeoutMs: 2_000 });
    try {
      hits.length = 0;
      const literal = await sender.post(`${origin}/ok`, {}, '{}', never);
      assert.deepEqual(literal, { ok: false, status: null, error: 'the URL points to an address that is not public', retryAfterMs: null });
      const byName = await sender.post(`http://localhost:${new URL(origin).port}/ok`, {}, '{}', never);
      assert.deepEqual(byName, { ok: false, status: null, error: 'the URL resolves to an address that is not public', retryAfterMs: null });
      assert.deepEqual(hits, []);
    } finally {
      await sender.close();
    }
  });

  test('answers: 2xx delivered, redirects not followed, retry-after read, a hung endpoint cut at the timeout; no URL in errors', async () => {
    const sender = new WebhookSender({ allowHttp: true, allowPrivateAddresses: true, timeoutMs: 10_000 });
    // A short timeout only where the endpoint never answers: a loaded machine cannot make it pass or fail early.
    const impatient = new WebhookSender({ allowHttp: true, allowPrivateAddresses: true, timeoutMs: 300 });
    try {
      hits.length = 0;
      assert.deepEqual(await sender.post(`${origin}/ok`, { 'webhook-id': 'msg_1' }, '{}', never), { ok: true, status: 204 });
      assert.deepEqual(await sender.post(`${origin}/redirect`, {}, '{}', never), {
        ok: false,
        status: 307,
        error: 'the endpoint answered HTTP 307',
        retryAfterMs: null,
      });
      assert.deepEqual(hits, ['/ok', '/redirect'], 'the redirect was not followed');
      const busy = await sender.post(`${origin}/busy`, {}, '{}', never);
      assert.deepEqual(busy, { ok: false, status: 429, error: 'the endpoint answered HTTP 429', retryAfterMs: 7_000 });
      const hung = await impatient.post(`${origin}/hang`, {}, '{}', never);
      assert.deepEqual(hung, { ok: false, status: null, error: 'no answer within 300 ms', retryAfterMs: null });
      const big = await sender.post(`${origin}/error?token=s3cret`, {}, '{}', never);
      assert.deepEqual(big, { ok: false, status: 500, error: 'the endpoint answered HTTP 500', retryAfterMs: null });
      const refused = await sender.post('http://127.0.0.1:1/hook?token=s3cret', {}, '{}', never);
      assert.deepEqual(refused, { ok: false, status: null, error: 'the connection was refused', retryAfterMs: null });
      const stopping = new AbortController();
      const pending = sender.post(`${origin}/hang`, {}, '{}', stopping.signal);
      stopping.abort();
      const stopped = await pending;
      assert.equal(stopped.ok, false, 'stopping aborts an attempt at once');
    } finally {
      await sender.close();
      await impatient.close();
    }
  });
});
