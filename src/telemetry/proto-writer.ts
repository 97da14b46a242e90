/**
 * The byte writer under the OTLP protobuf encoder (otlp-proto.ts): a growable buffer reused from one
 * export to the next, with the protobuf wire types written straight into it (varints, int64, fixed32
 * and fixed64, doubles, length-delimited strings and ids) and nested messages whose length is written
 * once they end (`open()` reserves the bytes the length is expected to take, `close()` writes it,
 * moving the message when it needs more or fewer).
 */
const TWO_32 = 0x1_0000_0000;

/** Bytes a varint of `value` (0 <= value < 2^53) takes. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** The bytes of the last id written in one place (trace id, span id, parent id). */
export interface IdCache {
  hex: string;
  bytes: Uint8Array;
}

export const idCache = (size: number): IdCache => ({ hex: '', bytes: new Uint8Array(size) });

/** One hex digit's value ('0'-'9', 'a'-'f', 'A'-'F'). */
function nibble(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

/** A growable byte buffer, reused from one export to the next. */
export class ProtoWriter {
  buffer: Buffer;
  at = 0;

  constructor(size: number) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  reset(): void {
    this.at = 0;
  }

  ensure(more: number): void {
    if (this.at + more <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + more));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  byte(value: number): void {
    this.ensure(1);
    this.buffer[this.at++] = value;
  }

  /** A varint of 0 <= value < 2^53. */
  varint(value: number): void {
    this.ensure(10);
    const buffer = this.buffer;
    let at = this.at;
    while (value >= 0x80) {
      buffer[at++] = (value & 0x7f) | 0x80;
      value = value >= TWO_32 ? Math.floor(value / 128) : value >>> 7;
    }
    buffer[at++] = value;
    this.at = at;
  }

  /** A signed int64 as a varint (a negative value is its 64-bit two's complement: ten bytes). */
  int64(value: number): void {
    if (value >= 0) return this.varint(value);
    let rest = BigInt.asUintN(64, BigInt(value));
    this.ensure(10);
    while (rest >= 0x80n) {
      this.buffer[this.at++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.buffer[this.at++] = Number(rest);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.at = this.buffer.writeUInt32LE(value >>> 0, this.at);
  }

  /** Milliseconds since the epoch (sub-millisecond fraction) as fixed64 nanoseconds, to the microsecond. */
  unixNano(milliseconds: number): void {
    // Exact in doubles: micros < 2^53; nanoseconds as two 32-bit halves.
    const micros = Math.max(0, Math.round(milliseconds * 1000));
    const high = Math.floor(micros / TWO_32);
    const low = (micros - high * TWO_32) * 1000;
    const carry = Math.floor(low / TWO_32);
    this.ensure(8);
    this.buffer.writeUInt32LE(low - carry * TWO_32, this.at);
    this.buffer.writeUInt32LE(high * 1000 + carry, this.at + 4);
    this.at += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.at = this.buffer.writeDoubleLE(value, this.at);
  }

  /** A length-delimited string (its tag already written). */
  string(value: string): void {
    if (value.length < 43) {
      // At most 3 bytes per UTF-16 unit: the length fits one byte.
      this.ensure(1 + value.length * 3);
      const written = this.buffer.write(value, this.at + 1, 'utf8');
      this.buffer[this.at] = written;
      this.at += 1 + written;
      return;
    }
    const size = Buffer.byteLength(value);
    this.varint(size);
    this.ensure(size);
    this.at += this.buffer.write(value, this.at, size, 'utf8');
  }

  /** A length-delimited hex id (16 or 8 bytes, lowercase hex), its tag already written. */
  hexBytes(hex: string, cache: IdCache): void {
    const size = hex.length >>> 1;
    this.ensure(1 + size);
    const buffer = this.buffer;
    let at = this.at;
    buffer[at++] = size;
    const bytes = cache.bytes;
    if (hex !== cache.hex) {
      // A span's trace id and parent id are most often the previous span's (a request's spans end together).
      for (let index = 0; index < size; index++)
        bytes[index] = (nibble(hex.charCodeAt(2 * index)) << 4) | nibble(hex.charCodeAt(2 * index + 1));
      cache.hex = hex;
    }
    for (let index = 0; index < size; index++) buffer[at++] = bytes[index]!;
    this.at = at;
  }

  bytes(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** Starts a nested message (its tag already written): reserves `expected` bytes for its length; returns where it starts. */
  open(expected: number): number {
    this.ensure(expected);
    this.at += expected;
    return this.at;
  }

  /** Ends the nested message begun at `start` with `reserved` length bytes: writes its length, moving it when it needs more. */
  close(start: number, reserved: number): void {
    const length = this.at - start;
    const size = varintSize(length);
    if (size !== reserved) {
      this.ensure(size - reserved);
      this.buffer.copyWithin(start - reserved + size, start, this.at);
      this.at += size - reserved;
    }
    let at = start - reserved;
    let value = length;
    while (value >= 0x80) {
      this.buffer[at++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buffer[at] = value;
  }
}
