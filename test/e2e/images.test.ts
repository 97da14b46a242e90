// POST /v1/images/generations end to end: a real server, the official openai SDK, the built-in
// procedural renderer, and an OpenAI-compatible mock upstream whose `url` results are re-served from
// our own file store.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { PNG } from 'pngjs';
import { encodePngRgb } from '../../src/providers/builtin/image/image-png-encoder.ts';
import { MockOpenAIServer } from '../support/mock-upstreams/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const BUILTIN = 'switchyard-images';
const VIA_UPSTREAM = 'mock-images';

async function rawPost(server: TestServer, body: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${server.origin}/v1/images/generations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.key}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

function decodePng(bytes: Buffer): { width: number; height: number } {
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height };
}

describe('image generation end to end', () => {
  const upstream = new MockOpenAIServer();
  const upstreamPng = encodePngRgb(4, 3, new Uint8Array(36).fill(120));
  let fileHost: Server;
  let fileHostUrl = '';
  const fileHostRequests: string[] = [];
  let server: TestServer;
  let client: OpenAI;

  before(async () => {
    await upstream.start();
    fileHost = createServer((request, response) => {
      fileHostRequests.push(request.url ?? '');
      if (request.url === '/generated/1.png') response.writeHead(200, { 'content-type': 'image/png' }).end(upstreamPng);
      else if (request.url === '/internal-secret.json')
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"internal":1}');
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => fileHost.listen(0, '127.0.0.1', resolve));
    fileHostUrl = `http://127.0.0.1:${(fileHost.address() as AddressInfo).port}`;
    server = await startTestServer({
      config: {
        providers: {
          // The test's image host is on 127.0.0.1: this provider opts out of the public-address rule.
          mock: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0, allowPrivateImageUrls: true },
          // The default: image URLs are fetched from public addresses only.
          guarded: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, maxRetries: 0 },
        },
        models: [
          { id: VIA_UPSTREAM, provider: 'mock', upstreamModel: 'dall-e-3', capabilities: ['image_generation'], imageSizes: ['1024x1024'] },
          {
            id: 'guarded-images',
            provider: 'guarded',
            upstreamModel: 'dall-e-3',
            capabilities: ['image_generation'],
            imageSizes: ['1024x1024'],
          },
        ],
      },
    });
    client = new OpenAI({ apiKey: server.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  beforeEach(() => upstream.reset());
  after(async () => {
    await server.close();
    await upstream.close();
    fileHost.closeAllConnections();
    await new Promise<void>((resolve) => fileHost.close(() => resolve()));
  });

  test('images.generate with b64_json: real PNGs of the requested size, n of them', async () => {
    const result = await client.images.generate({
      model: BUILTIN,
      prompt: 'a lighthouse on a cliff at dusk',
      n: 2,
      size: '256x256',
      response_format: 'b64_json',
    });
    assert.ok(Number.isInteger(result.created));
    assert.equal(result.data?.length, 2);
    for (const image of result.data ?? []) {
      assert.equal(image.url, undefined);
      assert.deepEqual(decodePng(Buffer.from(image.b64_json!, 'base64')), { width: 256, height: 256 });
    }
    assert.notEqual(result.data![0]!.b64_json, result.data![1]!.b64_json);
  });

  test('images.generate with url: a signed link to our own file store, fetchable without a key', async () => {
    const result = await client.images.generate({ model: BUILTIN, prompt: 'a calm ocean', size: '512x512', response_format: 'url' });
    const url = result.data![0]!.url!;
    assert.ok(url.startsWith(`${server.origin}/v1/files/`), url);
    const download = await fetch(url);
    assert.equal(download.status, 200);
    assert.match(download.headers.get('content-type') ?? '', /^image\/png/);
    assert.deepEqual(decodePng(Buffer.from(await download.arrayBuffer())), { width: 512, height: 512 });
    const tampered = await fetch(url.replace(/signature=[^&]+/, 'signature=forged'));
    assert.ok(tampered.status >= 400);
  });

  test('defaults: 1024x1024, the first image model of the catalogue; styling options are named in a warning header', async () => {
    const raw = await rawPost(server, { model: BUILTIN, prompt: 'mountains', quality: 'hd', style: 'vivid', response_format: 'b64_json' });
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get('x-switchyard-ignored-parameters'), 'quality, style');
    assert.deepEqual(decodePng(Buffer.from(raw.body.data[0].b64_json, 'base64')), { width: 1024, height: 1024 });
    assert.equal(raw.body._metadata.status, true);
    upstream.enqueue({ type: 'json', body: { created: 1, data: [{ b64_json: upstreamPng.toString('base64') }] } });
    const defaulted = await rawPost(server, { prompt: 'mountains', response_format: 'b64_json' });
    assert.equal(defaulted.status, 200);
    assert.equal((upstream.requests[0]!.body as { model: string }).model, 'dall-e-3');
  });

  test('through an OpenAI-compatible upstream: a url result is re-served from our store, revised_prompt kept', async () => {
    upstream.enqueue({
      type: 'json',
      body: { created: 1, data: [{ url: `${fileHostUrl}/generated/1.png`, revised_prompt: 'a fox, oil painting' }] },
    });
    const result = await client.images.generate({ model: VIA_UPSTREAM, prompt: 'a fox', response_format: 'url' });
    assert.deepEqual(upstream.requests[0]!.body, { model: 'dall-e-3', prompt: 'a fox', n: 1, size: '1024x1024' });
    const image = result.data![0]!;
    assert.equal(image.revised_prompt, 'a fox, oil painting');
    assert.ok(image.url!.startsWith(server.origin), 'served by us, not by the upstream');
    const download = await fetch(image.url!);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), upstreamPng);

    upstream.enqueue({ type: 'json', body: { created: 1, data: [{ b64_json: upstreamPng.toString('base64') }] } });
    const inline = await client.images.generate({ model: VIA_UPSTREAM, prompt: 'a fox', response_format: 'b64_json' });
    assert.deepEqual(Buffer.from(inline.data![0]!.b64_json!, 'base64'), upstreamPng);
  });

  test('an image backend answering a loopback URL gets an error instead of a fetch; nothing is stored', async () => {
    fileHostRequests.length = 0;
    const port = (fileHost.address() as AddressInfo).port;
    for (const url of [
      `http://127.0.0.1:${port}/internal-secret.json`,
      `http://localhost:${port}/internal-secret.json`,
      `http://[::ffff:127.0.0.1]:${port}/internal-secret.json`,
      `http://2130706433:${port}/internal-secret.json`,
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      upstream.enqueue({ type: 'json', body: { created: 1, data: [{ url }] } });
      const refused = await client.images
        .generate({ model: 'guarded-images', prompt: 'a fox', response_format: 'url' })
        .catch((error: unknown) => error);
      assert.ok(refused instanceof OpenAI.APIError, `${url}: ${String(refused)}`);
      assert.ok((refused.status ?? 0) >= 500, `${url}: status ${refused.status}`);
      assert.doesNotMatch(refused.message, /127\.0\.0\.1|169\.254|localhost/);
    }
    assert.deepEqual(fileHostRequests, [], 'the image host was never asked');
    // With the operator's explicit setting, a private host's non-image answer is still not stored.
    upstream.enqueue({ type: 'json', body: { created: 1, data: [{ url: `${fileHostUrl}/internal-secret.json` }] } });
    const notImage = await client.images
      .generate({ model: VIA_UPSTREAM, prompt: 'a fox', response_format: 'url' })
      .catch((error: unknown) => error);
    assert.ok(notImage instanceof OpenAI.APIError);
    assert.ok((notImage.status ?? 0) >= 500);
    assert.match(notImage.message, /not a PNG, JPEG, WebP or GIF image/);
    assert.deepEqual(fileHostRequests, ['/internal-secret.json']);
  });

  test('error classes: 400 with param, unknown model, wrong capability, permission, upstream refusal', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: BUILTIN }, 'prompt'],
      [{ model: BUILTIN, prompt: '' }, 'prompt'],
      [{ model: BUILTIN, prompt: 'x', size: '640x480' }, 'size'],
      [{ model: BUILTIN, prompt: 'x', n: 11 }, 'n'],
      [{ model: BUILTIN, prompt: 'x', response_format: 'png' }, 'response_format'],
      [{ model: BUILTIN, prompt: 'x'.repeat(4001) }, 'prompt'],
    ];
    for (const [body, param] of cases) {
      const raw = await rawPost(server, body);
      assert.equal(raw.status, 400);
      assert.equal(raw.body.error.param, param);
    }
    await assert.rejects(client.images.generate({ model: BUILTIN, prompt: 'x', size: '1792x1024' }), OpenAI.BadRequestError);
    await assert.rejects(client.images.generate({ model: 'no-such-model', prompt: 'x' }), OpenAI.NotFoundError);
    await assert.rejects(client.images.generate({ model: 'switchyard-echo', prompt: 'x' }), OpenAI.BadRequestError);
    const noImages = await server.createKey({ permissions: ['embeddings'] });
    await assert.rejects(
      new OpenAI({ apiKey: noImages.key, baseURL: server.baseUrl, maxRetries: 0 }).images.generate({ prompt: 'x' }),
      OpenAI.PermissionDeniedError,
    );
    upstream.enqueue({ type: 'error', status: 400, message: 'Your request was rejected as a result of our safety system.' });
    await assert.rejects(client.images.generate({ model: VIA_UPSTREAM, prompt: 'x' }), OpenAI.BadRequestError);
  });
});
