import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { encodePngRgb } from '../../../src/providers/builtin/image/image-png-encoder.ts';
import { createBuiltinImageModel, parseImageSize } from '../../../src/providers/builtin/image/image-procedural-model.ts';
import { renderProceduralImage } from '../../../src/providers/builtin/image/image-procedural-renderer.ts';

const model = createBuiltinImageModel();
const options = () => ({ signal: new AbortController().signal });

after(() => model.close());

describe('PNG encoder', () => {
  test('writes a PNG that pngjs decodes (CRCs checked) with the exact pixels', () => {
    const width = 5;
    const height = 3;
    const pixels = Uint8Array.from({ length: width * height * 3 }, (_, index) => (index * 37) % 256);
    const decoded = PNG.sync.read(encodePngRgb(width, height, pixels), { checkCRC: true } as never);
    assert.equal(decoded.width, width);
    assert.equal(decoded.height, height);
    for (let pixel = 0; pixel < width * height; pixel++) {
      assert.deepEqual([...decoded.data.subarray(pixel * 4, pixel * 4 + 3)], [...pixels.subarray(pixel * 3, pixel * 3 + 3)]);
      assert.equal(decoded.data[pixel * 4 + 3], 255);
    }
  });

  test('has the PNG signature, an IHDR for 8-bit RGB and a zlib IDAT', () => {
    const png = encodePngRgb(2, 2, new Uint8Array(12).fill(200));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(png.toString('latin1', 12, 16), 'IHDR');
    assert.equal(png[24], 8); // bit depth
    assert.equal(png[25], 2); // colour type RGB
    const idatLength = png.readUInt32BE(33);
    assert.equal(png.toString('latin1', 37, 41), 'IDAT');
    assert.equal(inflateSync(png.subarray(41, 41 + idatLength)).length, 2 * (1 + 2 * 3));
    assert.equal(png.toString('latin1', png.length - 8, png.length - 4), 'IEND');
  });

  test('refuses mismatched pixel buffers', () => {
    assert.throws(() => encodePngRgb(2, 2, new Uint8Array(11)), RangeError);
    assert.throws(() => encodePngRgb(0, 2, new Uint8Array(0)), RangeError);
  });
});

describe('procedural renderer', () => {
  test('deterministic per prompt and variant; different prompts and variants differ', () => {
    const first = renderProceduralImage('a lighthouse at dusk', 64, 64, 0);
    assert.deepEqual(renderProceduralImage('a lighthouse at dusk', 64, 64, 0), first);
    assert.notDeepEqual(renderProceduralImage('a lighthouse at dusk', 64, 64, 1), first);
    assert.notDeepEqual(renderProceduralImage('a lighthouse at noon', 64, 64, 0), first);
  });

  test('is more than noise: neighbouring pixels are close and the picture is not flat', () => {
    for (const prompt of ['mountains at sunset', 'starry night', 'calm ocean', 'abstract shapes', 'a teapot']) {
      const size = 128;
      const pixels = renderProceduralImage(prompt, size, size, 0);
      let neighbourDifference = 0;
      let minimum = 255;
      let maximum = 0;
      for (let y = 0; y < size; y++) {
        for (let x = 1; x < size; x++) {
          const offset = (y * size + x) * 3;
          neighbourDifference += Math.abs(pixels[offset]! - pixels[offset - 3]!);
          minimum = Math.min(minimum, pixels[offset]!);
          maximum = Math.max(maximum, pixels[offset]!);
        }
      }
      assert.ok(neighbourDifference / (size * (size - 1)) < 12, `${prompt}: too noisy`);
      assert.ok(maximum - minimum > 30, `${prompt}: flat`);
    }
  });
});

describe('built-in image model', () => {
  for (const size of ['256x256', '512x512', '1024x1024']) {
    test(`renders a real ${size} PNG`, async () => {
      const [image] = await model.generate({ prompt: 'a red fox in a snowy forest', n: 1, size }, options());
      assert.equal(image!.mediaType, 'image/png');
      const decoded = PNG.sync.read(image!.bytes);
      assert.equal(`${decoded.width}x${decoded.height}`, size);
    });
  }

  test('n images are distinct; the same request gives the same bytes', async () => {
    const request = { prompt: 'two boats on a lake', n: 3, size: '256x256' };
    const images = await model.generate(request, options());
    assert.equal(images.length, 3);
    assert.equal(new Set(images.map((image) => image.bytes.toString('base64'))).size, 3);
    const again = await model.generate(request, options());
    assert.deepEqual(
      again.map((image) => image.bytes),
      images.map((image) => image.bytes),
    );
  });

  test('rendering does not block the event loop: a timer fires while two 1024x1024 images render', async () => {
    let done = false;
    const rendering = model.generate({ prompt: 'event loop check', n: 2, size: '1024x1024' }, options()).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(done, false);
    await rendering;
  });

  test('bad sizes and counts are 400s naming the field; an aborted request rejects', async () => {
    await assert.rejects(model.generate({ prompt: 'x', n: 1, size: 'big' }, options()), { status: 400, param: 'size' });
    await assert.rejects(model.generate({ prompt: 'x', n: 1, size: '4096x4096' }, options()), { status: 400, param: 'size' });
    await assert.rejects(model.generate({ prompt: 'x', n: 11, size: '256x256' }, options()), { status: 400, param: 'n' });
    const controller = new AbortController();
    const pending = model.generate({ prompt: 'x', n: 2, size: '512x512' }, { signal: controller.signal });
    controller.abort(new Error('gone'));
    await assert.rejects(pending, /gone/);
  });

  test('parseImageSize reads WxH', () => {
    assert.deepEqual(parseImageSize('640x480'), { width: 640, height: 480 });
  });
});
