// The row splitter of the Postgres blob store's COPY reads (src/files/postgres/binary-copy-rows.ts):
// a COPY BINARY byte stream split at EVERY byte position (and one byte at a time) gives the same rows,
// and each malformed stream (bad header, header extension, NULL field, data after the end marker, no
// end marker, field count other than 1) fails with an error naming what is wrong, at every split too.
// The streams are built by the format's rules here (always) and taken from a real Postgres through
// pg-copy-streams (with TEST_DATABASE_URL; skipped LOUDLY without it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { BinaryCopyRows, BinaryCopyRowsError } from '../../../src/files/postgres/binary-copy-rows.ts';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

function int16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeInt16BE(value);
  return bytes;
}

function int32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(value);
  return bytes;
}

/** A COPY BINARY stream of one-field rows, by the format's rules (PostgreSQL docs, "COPY > Binary Format"). */
function copyStream(rows: readonly (Buffer | null)[], options: { flags?: number; extension?: Buffer; fields?: number } = {}): Buffer {
  const extension = options.extension ?? Buffer.alloc(0);
  const parts = [SIGNATURE, int32(options.flags ?? 0), int32(extension.length), extension];
  for (const row of rows) {
    parts.push(int16(options.fields ?? 1));
    for (let field = 0; field < (options.fields ?? 1); field++) {
      if (row === null) parts.push(int32(-1));
      else parts.push(int32(row.length), row);
    }
  }
  parts.push(int16(-1));
  return Buffer.concat(parts);
}

/** Splits `stream` at `at` and feeds both halves; the rows, or the error thrown by push or end. */
function splitAt(stream: Buffer, at: number): Buffer[] | Error {
  const rows = new BinaryCopyRows();
  try {
    rows.push(stream.subarray(0, at));
    rows.push(stream.subarray(at));
    return rows.end();
  } catch (error) {
    return error as Error;
  }
}

function byteByByte(stream: Buffer): Buffer[] | Error {
  const rows = new BinaryCopyRows();
  try {
    // A fresh buffer reused for every byte: the splitter must copy out what it keeps.
    const one = Buffer.alloc(1);
    for (const byte of stream) {
      one[0] = byte;
      rows.push(one);
    }
    return rows.end();
  } catch (error) {
    return error as Error;
  }
}

/** The same rows at every split position and one byte at a time. */
function assertRowsAtEverySplit(stream: Buffer, expected: readonly Buffer[]): void {
  for (let at = 0; at <= stream.length; at++) {
    const result = splitAt(stream, at);
    assert.ok(!(result instanceof Error), `split at ${at}: ${String(result)}`);
    assert.deepEqual(result, expected, `split at ${at}`);
  }
  assert.deepEqual(byteByByte(stream), expected);
}

/** The same clear error at every split position and one byte at a time. */
function assertFailsAtEverySplit(stream: Buffer, message: string): void {
  for (let at = 0; at <= stream.length; at++) {
    const result = splitAt(stream, at);
    assert.ok(result instanceof BinaryCopyRowsError, `split at ${at}: expected an error, got ${String(result)}`);
    assert.equal(result.message, message, `split at ${at}`);
  }
  const whole = byteByByte(stream);
  assert.ok(whole instanceof BinaryCopyRowsError);
  assert.equal(whole.message, message);
}

const ROWS = [
  Buffer.from('hello'),
  Buffer.alloc(0),
  Buffer.from(Array.from({ length: 256 }, (_, index) => index)),
  Buffer.from('ÿ\n\r\0end'),
];

/** The malformed streams every source must refuse, made from a good stream of `rows`. */
function malformedCases(good: Buffer, rows: readonly Buffer[]): [name: string, stream: Buffer, message: string][] {
  const badSignature = Buffer.from(good);
  badSignature[0] = 'Q'.charCodeAt(0);
  const flags = Buffer.from(good);
  flags.writeUInt32BE(1 << 16, 11); // the OID flag
  return [
    ['a bad signature', badSignature, 'Reading blob chunks: the COPY stream has an unexpected header.'],
    ['header flags', flags, 'Reading blob chunks: the COPY stream has an unexpected header.'],
    [
      'a header extension',
      copyStream(rows, { extension: Buffer.from('ext!') }),
      'Reading blob chunks: the COPY stream has a header extension.',
    ],
    ['a NULL field', copyStream([rows[0]!, null]), 'Reading blob chunks: the COPY stream has a NULL chunk.'],
    ['two fields in a row', copyStream(rows, { fields: 2 }), 'Reading blob chunks: the COPY stream has 2 fields in a row.'],
    ['data after the end marker', Buffer.concat([good, int16(1)]), 'Reading blob chunks: the COPY stream has data after its end marker.'],
    ['no end marker', good.subarray(0, good.length - 2), 'Reading blob chunks: the COPY stream has no end marker.'],
    ['a stream cut inside a row', good.subarray(0, 19 + 2 + 4 + 2), 'Reading blob chunks: the COPY stream has no end marker.'],
    ['a stream cut inside the header', good.subarray(0, 7), 'Reading blob chunks: the COPY stream has no end marker.'],
    ['nothing at all', Buffer.alloc(0), 'Reading blob chunks: the COPY stream has no end marker.'],
  ];
}

describe('BinaryCopyRows: streams built by the format rules', () => {
  test('the rows at every split position', () => {
    assertRowsAtEverySplit(copyStream(ROWS), ROWS);
  });

  test('a stream with no rows', () => {
    assertRowsAtEverySplit(copyStream([]), []);
  });

  for (const [name, stream, message] of malformedCases(copyStream(ROWS), ROWS)) {
    test(`${name}: a clear error at every split position`, () => assertFailsAtEverySplit(stream, message));
  }
});

const databaseUrl = process.env['TEST_DATABASE_URL'];
if (databaseUrl === undefined || databaseUrl === '') {
  console.warn('\n*** SKIPPED: COPY BINARY streams from a real Postgres (set TEST_DATABASE_URL to run them) ***\n');
}

describe(
  'BinaryCopyRows: streams from a real Postgres (pg-copy-streams)',
  { skip: databaseUrl === undefined || databaseUrl === '' },
  () => {
    let client: pg.Client;
    before(async () => {
      client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
    });
    after(async () => client.end());

    /** The raw bytes of `COPY (select) TO STDOUT (FORMAT binary)`. */
    async function copyBytes(select: string): Promise<Buffer> {
      const chunks: Buffer[] = [];
      for await (const chunk of client.query(copyTo(`COPY (${select}) TO STDOUT (FORMAT binary)`))) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    }

    const values = `VALUES (1, '\\x68656c6c6f'::bytea), (2, ''::bytea), (3, decode(${pg.escapeLiteral(ROWS[2]!.toString('hex'))}, 'hex')), (4, decode(${pg.escapeLiteral(ROWS[3]!.toString('hex'))}, 'hex'))`;

    test('the rows at every split position, the same bytes as the format rules give', async () => {
      const real = await copyBytes(`SELECT data FROM (${values}) AS t(seq, data) ORDER BY seq`);
      assert.deepEqual(real, copyStream(ROWS));
      assertRowsAtEverySplit(real, ROWS);
    });

    test('a NULL field and two fields, as the server sends them', async () => {
      assertFailsAtEverySplit(await copyBytes(`SELECT NULL::bytea`), 'Reading blob chunks: the COPY stream has a NULL chunk.');
      assertFailsAtEverySplit(
        await copyBytes(`SELECT 'a'::bytea, 'b'::bytea`),
        'Reading blob chunks: the COPY stream has 2 fields in a row.',
      );
    });

    test('the malformed streams made from the real one', async () => {
      const real = await copyBytes(`SELECT data FROM (${values}) AS t(seq, data) ORDER BY seq`);
      for (const [name, stream, message] of malformedCases(real, ROWS)) {
        assert.doesNotThrow(() => assertFailsAtEverySplit(stream, message), name);
      }
    });
  },
);
