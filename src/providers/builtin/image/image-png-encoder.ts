/**
 * A minimal PNG encoder (PNG specification, W3C Recommendation, 2nd edition: signature, IHDR, IDAT,
 * IEND; zlib deflate; CRC-32 per chunk): 8-bit RGB, no interlacing. Every row uses the "Up" filter,
 * which turns the smooth vertical gradients of the procedural renderer into runs of small values that
 * deflate compresses well.
 */
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** PNG colour type 2: truecolour (RGB). */
const COLOUR_TYPE_RGB = 2;
/** Filter type 2 ("Up"): each byte minus the byte above it. */
const FILTER_UP = 2;
const BYTES_PER_PIXEL = 3;

function chunk(type: string, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(data.length, 0);
  header.write(type, 4, 'latin1');
  const checksum = Buffer.alloc(4);
  // The CRC covers the chunk type and data, not the length.
  checksum.writeUInt32BE(crc32(data, crc32(header.subarray(4, 8))) >>> 0, 0);
  return Buffer.concat([header, data, checksum]);
}

/**
 * Encodes `pixels` (width * height * 3 bytes, rows top to bottom, R G B per pixel) as a PNG file.
 * `compressionLevel` is zlib's 0-9 (default 6).
 */
export function encodePngRgb(width: number, height: number, pixels: Uint8Array, compressionLevel = 6): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`PNG dimensions must be positive integers, got ${width}x${height}.`);
  }
  const stride = width * BYTES_PER_PIXEL;
  if (pixels.length !== stride * height) throw new RangeError(`Expected ${stride * height} pixel bytes, got ${pixels.length}.`);

  const filtered = Buffer.alloc((stride + 1) * height);
  for (let row = 0; row < height; row++) {
    const out = row * (stride + 1);
    const current = row * stride;
    const previous = current - stride;
    filtered[out] = FILTER_UP;
    for (let column = 0; column < stride; column++) {
      const above = row === 0 ? 0 : pixels[previous + column]!;
      filtered[out + 1 + column] = (pixels[current + column]! - above) & 0xff;
    }
  }

  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = COLOUR_TYPE_RGB;
  header[10] = 0; // compression method: deflate
  header[11] = 0; // filter method: adaptive
  header[12] = 0; // no interlace
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(filtered, { level: compressionLevel })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
