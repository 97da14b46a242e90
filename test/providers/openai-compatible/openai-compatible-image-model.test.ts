import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePngRgb } from '../../../src/providers/builtin/image/image-png-encoder.ts';
import { UpstreamHttpClient } from '../../../src/providers/shared/http-client.ts';
import { OpenAICompatibleImageModel, sniffImageMediaType } from '../../../src/providers/openai-compatible/openai-compatible-image-model.ts';
import { MockOpenAIServer } from '../../support/mock-upstreams/index.ts';

const upstream = new MockOpenAIServer();
const png = encodePngRgb(2, 2, new Uint8Array(12).fill(90));
const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
/** Plays the upstream's file host for `url` results (a separate origin, as OpenAI's blob storage is). */
let fileHost: Server;
let fileHostUrl = '';
let client: UpstreamHttpClient;
const options = () => ({ signal: new AbortController().signal });

before(async () => {
  await upstream.start();
  client = new UpstreamHttpClient({ baseUrl: upstream.baseUrl, timeoutMs: 5_000 });
  fileHost = createServer((request, response) => {
    if (request.url === '/image.png') response.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (request.url === '/photo') response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(jpeg);
    else if (request.url === '/page.html') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html></html>');
    else response.writeHead(404).end('gone');
  });
  await new Promise<void>((resolve) => fileHost.listen(0, '127.0.0.1', resolve));
  fileHostUrl = `http://127.0.0.1:${(fileHost.address() as AddressInfo).port}`;
});
beforeEach(() => upstream.reset());
after(async () => {
  await client.close();
  await upstream.close();
  fileHost.closeAllConnections();
  await new Promise<void>((resolve) => fileHost.close(() => resolve()));
});

describe('OpenAICompatibleImageModel', () => {
  test('sends the OpenAI request without response_format and decodes b64_json results', async () => {
    upstream.enqueue({
      type: 'json',
      body: { created: 1, data: [{ b64_json: png.toString('base64'), revised_prompt: 'a fox, detailed' }] },
    });
    const model = new OpenAICompatibleImageModel(client, { upstreamModel: 'dall-e-3', headers: {} });
    const images = await model.generate({ prompt: 'a fox', n: 1, size: '1024x1024', user: 'u1' }, options());
    assert.deepEqual(upstream.requests[0]!.body, { model: 'dall-e-3', prompt: 'a fox', n: 1, size: '1024x1024', user: 'u1' });
    assert.equal(upstream.requests[0]!.path, '/v1/images/generations');
    assert.equal(images.length, 1);
    assert.deepEqual(images[0]!.bytes, png);
    assert.equal(images[0]!.mediaType, 'image/png');
    assert.equal(images[0]!.revisedPrompt, 'a fox, detailed');
  });

  test('url results are downloaded at once; the media type comes from the bytes', async () => {
    upstream.enqueue({ type: 'json', body: { created: 1, data: [{ url: `${fileHostUrl}/image.png` }, { url: `${fileHostUrl}/photo` }] } });
    // The test's image host is on 127.0.0.1: allowed explicitly (the default refuses it, as below).
    const model = new OpenAICompatibleImageModel(client, { upstreamModel: 'dall-e-2', headers: {}, allowPrivateAddresses: true });
    const images = await model.generate({ prompt: 'two pictures', n: 2, size: '256x256' }, options());
    assert.deepEqual(images[0]!.bytes, png);
    assert.equal(images[1]!.mediaType, 'image/jpeg');
    assert.equal(images[1]!.revisedPrompt, undefined);
  });

  test('a dead url, an empty answer and upstream errors are 5xx or mapped statuses, never leaking addresses', async () => {
    const model = new OpenAICompatibleImageModel(client, { upstreamModel: 'm', headers: {}, allowPrivateAddresses: true });
    upstream.enqueue({ type: 'json', body: { data: [{ url: `${fileHostUrl}/expired.png` }] } });
    await assert.rejects(model.generate({ prompt: 'p', n: 1, size: '256x256' }, options()), (error: Error & { status?: number }) => {
      assert.equal(error.status, 500);
      assert.doesNotMatch(error.message, /127\.0\.0\.1/);
      return true;
    });

    upstream.enqueue({ type: 'json', body: { data: [] } });
    await assert.rejects(model.generate({ prompt: 'p', n: 1, size: '256x256' }, options()), { status: 500 });
    upstream.enqueue({ type: 'json', body: { data: [{ url: 'file:///etc/passwd' }] } });
    await assert.rejects(model.generate({ prompt: 'p', n: 1, size: '256x256' }, options()), { status: 500 });
    upstream.enqueue({ type: 'error', status: 400, message: 'Your request was rejected by the safety system.' });
    await assert.rejects(model.generate({ prompt: 'p', n: 1, size: '256x256' }, options()), { status: 400, message: /safety system/ });
  });

  test('by default a url result on a loopback address is refused without a request; a non-image answer is never kept', async () => {
    const guarded = new OpenAICompatibleImageModel(client, { upstreamModel: 'm', headers: {} });
    upstream.enqueue({ type: 'json', body: { data: [{ url: `${fileHostUrl}/image.png` }] } });
    await assert.rejects(guarded.generate({ prompt: 'p', n: 1, size: '256x256' }, options()), (error: Error & { status?: number }) => {
      assert.equal(error.status, 500);
      assert.match(error.message, /not public/);
      return true;
    });
    const allowed = new OpenAICompatibleImageModel(client, { upstreamModel: 'm', headers: {}, allowPrivateAddresses: true });
    upstream.enqueue({ type: 'json', body: { data: [{ url: `${fileHostUrl}/page.html` }] } });
    await assert.rejects(allowed.generate({ prompt: 'p', n: 1, size: '256x256' }, options()), /text\/html, not a PNG, JPEG, WebP or GIF/);
  });

  test('sniffImageMediaType knows PNG, JPEG, WebP and GIF', () => {
    assert.equal(sniffImageMediaType(png), 'image/png');
    assert.equal(sniffImageMediaType(jpeg), 'image/jpeg');
    assert.equal(sniffImageMediaType(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1')), 'image/webp');
    assert.equal(sniffImageMediaType(Buffer.from('GIF89a', 'latin1')), 'image/gif');
    assert.equal(sniffImageMediaType(Buffer.from('hello')), undefined);
  });
});
