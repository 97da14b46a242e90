/**
 * A minimal writer of GGUF version 3 files (the llama.cpp model container, spec: ggml `docs/gguf.md`).
 * Layout, all little-endian:
 *   magic "GGUF" | uint32 version = 3 | uint64 tensor count | uint64 metadata count
 *   metadata: (string key, uint32 value type, value)*
 *   tensor infos: (string name, uint32 dimension count, uint64 dimensions[ne0 first], uint32 ggml type,
 *                  uint64 offset of the data relative to the data section)*
 *   padding to `general.alignment` | tensor data, each tensor starting on an aligned offset.
 * Strings are a uint64 byte length followed by UTF-8 bytes, without a terminator. Arrays are a uint32
 * element type, a uint64 length and the elements. Only F32 tensors are written: tests need no quantisation.
 */
import { writeFileSync } from 'node:fs';
import { endianness } from 'node:os';

/** GGUF metadata value types (`gguf_type` in ggml). */
const GGUF_TYPE = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

/** ggml tensor type of 32-bit floats. */
const GGML_TYPE_F32 = 0;

/** Alignment of the tensor data section and of each tensor in it, bytes (GGUF default). */
export const GGUF_ALIGNMENT = 32;

export type GgufScalarType = 'uint32' | 'int32' | 'float32' | 'bool' | 'string' | 'uint64';

/** One metadata value with its explicit GGUF type (JavaScript numbers alone do not say which width). */
export type GgufValue =
  | { type: 'uint32' | 'int32' | 'float32' | 'uint64'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: 'string'; value: readonly string[] }
  | { type: 'array'; itemType: 'float32' | 'int32'; value: readonly number[] };

export interface GgufTensor {
  /** llama.cpp tensor name, e.g. `blk.0.attn_q.weight`. */
  name: string;
  /** Dimensions in ggml order: `[ne0, ne1, ...]`, ne0 being the contiguous (row) length. */
  dimensions: readonly number[];
  /** Row-major values, `dimensions` multiplied together in length. */
  data: Float32Array;
}

/** Grows a byte buffer as values are appended. */
class ByteSink {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  uint8(value: number): void {
    this.reserve(1);
    this.buffer.writeUInt8(value, this.length);
    this.length += 1;
  }
  uint32(value: number): void {
    this.reserve(4);
    this.buffer.writeUInt32LE(value, this.length);
    this.length += 4;
  }
  int32(value: number): void {
    this.reserve(4);
    this.buffer.writeInt32LE(value, this.length);
    this.length += 4;
  }
  float32(value: number): void {
    this.reserve(4);
    this.buffer.writeFloatLE(value, this.length);
    this.length += 4;
  }
  uint64(value: number): void {
    this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), this.length);
    this.length += 8;
  }
  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.uint64(bytes.length);
    this.bytes(bytes);
  }
  bytes(value: Uint8Array): void {
    this.reserve(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
  }
  padTo(alignment: number): void {
    while (this.length % alignment !== 0) this.uint8(0);
  }
  contents(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function writeScalar(sink: ByteSink, type: GgufScalarType, value: number | boolean | string): void {
  switch (type) {
    case 'uint32':
      sink.uint32(value as number);
      break;
    case 'int32':
      sink.int32(value as number);
      break;
    case 'float32':
      sink.float32(value as number);
      break;
    case 'uint64':
      sink.uint64(value as number);
      break;
    case 'bool':
      sink.uint8(value === true ? 1 : 0);
      break;
    case 'string':
      sink.string(value as string);
      break;
  }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  if (value.type === 'array') {
    sink.uint32(GGUF_TYPE.array);
    sink.uint32(GGUF_TYPE[value.itemType]);
    sink.uint64(value.value.length);
    for (const item of value.value) writeScalar(sink, value.itemType, item);
    return;
  }
  sink.uint32(GGUF_TYPE[value.type]);
  writeScalar(sink, value.type, value.value);
}

/** Serialises a GGUF v3 file. `general.alignment` is written by this function; do not pass it. */
export function encodeGguf(metadata: ReadonlyArray<readonly [string, GgufValue]>, tensors: readonly GgufTensor[]): Buffer {
  const sink = new ByteSink();
  sink.bytes(Buffer.from('GGUF', 'latin1'));
  sink.uint32(3);
  sink.uint64(tensors.length);
  const entries: Array<readonly [string, GgufValue]> = [...metadata, ['general.alignment', { type: 'uint32', value: GGUF_ALIGNMENT }]];
  sink.uint64(entries.length);
  for (const [key, value] of entries) {
    sink.string(key);
    writeValue(sink, value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const tensor of tensors) {
    const elements = tensor.dimensions.reduce((product, dimension) => product * dimension, 1);
    if (elements !== tensor.data.length) {
      throw new Error(
        `Tensor ${tensor.name}: dimensions ${tensor.dimensions.join('x')} need ${elements} values, got ${tensor.data.length}.`,
      );
    }
    sink.string(tensor.name);
    sink.uint32(tensor.dimensions.length);
    for (const dimension of tensor.dimensions) sink.uint64(dimension);
    sink.uint32(GGML_TYPE_F32);
    sink.uint64(offset);
    offsets.push(offset);
    offset += tensor.data.byteLength;
    offset += (GGUF_ALIGNMENT - (offset % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;
  }
  sink.padTo(GGUF_ALIGNMENT);
  // Tensor bytes are copied from Float32Arrays as they are in memory; GGUF is little-endian.
  if (endianness() !== 'LE') throw new Error('encodeGguf writes tensor data in host byte order, which must be little-endian.');
  const dataStart = sink.length;
  tensors.forEach((tensor, index) => {
    // Pad up to the tensor's recorded offset, which is already aligned.
    while (sink.length < dataStart + (offsets[index] ?? 0)) sink.uint8(0);
    sink.bytes(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
  });
  sink.padTo(GGUF_ALIGNMENT);
  return sink.contents();
}

export function writeGgufFile(path: string, metadata: ReadonlyArray<readonly [string, GgufValue]>, tensors: readonly GgufTensor[]): void {
  writeFileSync(path, encodeGguf(metadata, tensors));
}
