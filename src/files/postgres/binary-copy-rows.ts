/**
 * The row splitter of a `COPY (SELECT <one bytea column> ...) TO STDOUT (FORMAT binary)` byte stream
 * (PostgreSQL docs, "COPY > Binary Format"): an 11-byte signature, 32-bit flags, a 32-bit header
 * extension length; per row a 16-bit field count, a 32-bit field length and the field's bytes; a field
 * count of -1 at the end. The bytes come from pg-copy-streams (`copyTo`), split wherever the network
 * and the COPY messages split them: the splitter keeps no assumption about where a chunk ends.
 *
 * Only what the blob store asks for is accepted (no OIDs, so zero flags and no header extension;
 * exactly one non-NULL field per row); anything else is a `BinaryCopyRowsError` naming what was wrong,
 * thrown from `push` or `end`, so a bad stream fails its read rather than hanging or yielding bytes.
 *
 * Why COPY at all: pg 8 decodes every DataRow field as UTF-8 (pg-protocol `parseDataRowMessage`), so a
 * bytea cannot be read raw through a SELECT, even with `binary: true` (brianc/node-postgres#3495,
 * open). Once pg reads binary result fields as bytes, the blob store can go back to a plain SELECT and
 * this file can go.
 */

/** What the stream starts with: signature, then flags (32 bits) and header extension length (32 bits). */
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const COPY_HEADER_BYTES = COPY_SIGNATURE.length + 8;

type Stage = 'header' | 'field count' | 'field length' | 'data' | 'end';

export class BinaryCopyRowsError extends Error {
  constructor(what: string) {
    super(`Reading blob chunks: the COPY stream has ${what}.`);
    this.name = 'BinaryCopyRowsError';
  }
}

/** Collects each row's one field as a Buffer of its own: `push` every chunk in order, then `end`. */
export class BinaryCopyRows {
  private readonly rows: Buffer[] = [];
  /** What comes next; every stage but `data` collects a few bytes in `small` first. */
  private stage: Stage = 'header';
  private readonly small = Buffer.alloc(COPY_HEADER_BYTES);
  private smallWanted = COPY_HEADER_BYTES;
  private smallFilled = 0;
  private row = Buffer.alloc(0);
  private rowFilled = 0;

  /** Takes the next bytes of the stream. `chunk` may be reused by its owner: the bytes are copied out. */
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.stage === 'end') throw new BinaryCopyRowsError('data after its end marker');
      if (this.stage === 'data') {
        const copied = chunk.copy(this.row, this.rowFilled, offset, offset + this.row.length - this.rowFilled);
        offset += copied;
        this.rowFilled += copied;
        if (this.rowFilled === this.row.length) this.expect('field count', 2);
        continue;
      }
      const copied = chunk.copy(this.small, this.smallFilled, offset, offset + this.smallWanted - this.smallFilled);
      offset += copied;
      this.smallFilled += copied;
      if (this.smallFilled === this.smallWanted) this.advance();
    }
  }

  /** The stream is over: its rows, in order. Throws when the end marker never came. */
  end(): Buffer[] {
    if (this.stage !== 'end') throw new BinaryCopyRowsError('no end marker');
    return this.rows;
  }

  /** A small field is complete in `small`: act on it and say what comes next. */
  private advance(): void {
    if (this.stage === 'header') {
      // Flags and extension are zero unless the COPY asked for OIDs, which it does not.
      if (!this.small.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE) || this.small.readUInt32BE(11) !== 0) {
        throw new BinaryCopyRowsError('an unexpected header');
      }
      if (this.small.readUInt32BE(15) !== 0) throw new BinaryCopyRowsError('a header extension');
      return this.expect('field count', 2);
    }
    if (this.stage === 'field count') {
      const fields = this.small.readInt16BE(0);
      if (fields === -1) return this.expect('end', 0);
      if (fields !== 1) throw new BinaryCopyRowsError(`${fields} fields in a row`);
      return this.expect('field length', 4);
    }
    const length = this.small.readInt32BE(0);
    if (length < 0) throw new BinaryCopyRowsError('a NULL chunk');
    this.row = Buffer.allocUnsafe(length);
    this.rowFilled = 0;
    this.rows.push(this.row);
    if (length === 0) return this.expect('field count', 2);
    this.stage = 'data';
  }

  private expect(stage: Exclude<Stage, 'header' | 'data'>, bytes: number): void {
    this.stage = stage;
    this.smallWanted = bytes;
    this.smallFilled = 0;
  }
}
