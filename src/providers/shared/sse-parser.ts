/**
 * Server-sent events parser, following the WHATWG HTML "event stream interpretation" rules
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * lines end in CRLF, LF or CR; `:` starts a comment; `data:` lines of one event are joined with `\n`;
 * a blank line dispatches the event. Bytes may be split anywhere (inside a line, inside a CRLF pair,
 * inside a multi-byte UTF-8 character): the parser keeps the unfinished tail until the next chunk.
 * It scans the text once; nothing here uses regular expressions over the stream (docs/design.md
 * convention 3: parse SSE once into events, then map events to canonical parts).
 */
import { StringDecoder } from 'node:string_decoder';

/**
 * Receives the events a parser dispatches, one call each: the reading loop of a provider maps events as
 * they are found, with no object or array per event (read-event-batches.ts).
 */
export interface SseSink {
  onEvent(data: string, event: string | undefined, id: string | undefined): void;
}

/** Collects dispatched events as SseMessage objects (`push`, `end`). */
class Collected implements SseSink {
  readonly messages: SseMessage[] = [];

  onEvent(data: string, event: string | undefined, id: string | undefined): void {
    this.messages.push({ event, data, id });
  }
}

/** One dispatched server-sent event. */
export interface SseMessage {
  /** The `event:` field, or undefined when the event had none (the spec's default type "message"). */
  event: string | undefined;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen on the stream, or undefined. */
  id: string | undefined;
}

const LINE_FEED = 10;
const LETTER_D = 100;
const LETTER_A = 97;
const LETTER_T = 116;
const COLON = 58;
const SPACE = 32;

export class SseParser {
  /**
   * Node's StringDecoder rather than a TextDecoder: both keep a multi-byte character split across chunks
   * and replace invalid bytes with U+FFFD, but a streaming TextDecoder sets up an ICU converter per
   * parser: ~3.6-4.7 µs per stream against ~0.7-1.1 µs for a 20-delta chat answer
   * (bench/node-primitives.ts). The byte order mark that TextDecoder would drop is dropped by `consume`.
   */
  private readonly decoder = new StringDecoder('utf8');
  /** Characters received but not yet ending a line. */
  private pending = '';
  /** The previous chunk ended in CR: a LF at the start of the next one belongs to that line break. */
  private skipLeadingLineFeed = false;
  private sawFirstCharacter = false;
  /** The event's `data:` lines so far, joined with `\n`; undefined before the first. */
  private data: string | undefined;
  private eventType: string | undefined;
  private lastEventId: string | undefined;

  /** Feeds bytes (or already decoded text) and returns the events completed by them, in order. */
  push(chunk: Uint8Array | string): SseMessage[] {
    const collected = new Collected();
    this.feed(chunk, collected);
    return collected.messages;
  }

  /** Feeds bytes (or already decoded text) and hands `sink` each event completed by them, in order. */
  feed(chunk: Uint8Array | string, sink: SseSink): void {
    this.consume(typeof chunk === 'string' ? chunk : this.decoder.write(chunk), sink);
  }

  /**
   * Ends the stream. A last line without a line break is still interpreted, and an event whose blank
   * line never came is dispatched too: upstreams that stop one newline short should not lose their
   * last event (lenient on the way out, docs/design.md convention 4).
   */
  end(): SseMessage[] {
    const collected = new Collected();
    this.finish(collected);
    return collected.messages;
  }

  /** `end`, handing `sink` the last events. */
  finish(sink: SseSink): void {
    this.consume(this.decoder.end(), sink);
    if (this.pending.length > 0) {
      this.interpretLine(this.pending, sink);
      this.pending = '';
    }
    this.dispatch(sink);
  }

  private consume(text: string, sink: SseSink): void {
    if (text.length === 0) return;
    let input = text;
    if (!this.sawFirstCharacter) {
      this.sawFirstCharacter = true;
      // A byte order mark at the very start of the stream is ignored.
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    let lineStart = 0;
    let index = 0;
    if (this.skipLeadingLineFeed) {
      this.skipLeadingLineFeed = false;
      if (input.charCodeAt(0) === LINE_FEED) {
        lineStart = 1;
        index = 1;
      }
    }
    const length = input.length;
    // Line breaks are found with indexOf (native) rather than a character loop: a read carries a few
    // kilobytes of JSON with a line break every couple of hundred characters. Most streams hold no CR.
    let carriageReturn = input.indexOf('\r', index);
    while (index < length) {
      if (carriageReturn !== -1 && carriageReturn < index) carriageReturn = input.indexOf('\r', index);
      const lineFeed = input.indexOf('\n', index);
      let end: number;
      if (carriageReturn !== -1 && (lineFeed === -1 || carriageReturn < lineFeed)) end = carriageReturn;
      else if (lineFeed !== -1) end = lineFeed;
      else break;
      if (this.pending.length === 0 && isDataLine(input, lineStart, end)) {
        // Nearly every line: its value is cut from the read's text at once, with no line string between.
        this.appendData(input.slice(input.charCodeAt(lineStart + 5) === SPACE && lineStart + 5 < end ? lineStart + 6 : lineStart + 5, end));
      } else {
        const line = this.pending.length > 0 ? this.pending + input.slice(lineStart, end) : input.slice(lineStart, end);
        this.pending = '';
        this.interpretLine(line, sink);
      }
      if (end === carriageReturn) {
        if (end + 1 < length) {
          if (input.charCodeAt(end + 1) === LINE_FEED) end++;
        } else {
          this.skipLeadingLineFeed = true;
        }
      }
      index = end + 1;
      lineStart = index;
    }
    if (lineStart < length) this.pending += input.slice(lineStart);
  }

  private interpretLine(line: string, sink: SseSink): void {
    if (line.length === 0) {
      this.dispatch(sink);
      return;
    }
    if (line.charCodeAt(0) === COLON) return; // comment, e.g. a keep-alive
    const colon = line.indexOf(':');
    // Nearly every line of a generation stream is `data: ...`: read it without slicing out the name.
    if (colon === 4 && line.startsWith('data')) {
      this.appendData(line.slice(line.charCodeAt(5) === SPACE ? 6 : 5));
      return;
    }
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      const valueStart = line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
      value = line.slice(valueStart);
    }
    switch (field) {
      case 'data':
        this.appendData(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastEventId = value;
        break;
      default:
        // `retry` and unknown fields carry nothing a backend client needs.
        break;
    }
  }

  private appendData(value: string): void {
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }

  private dispatch(sink: SseSink): void {
    const data = this.data;
    if (data === undefined) {
      this.eventType = undefined;
      return;
    }
    const eventType = this.eventType;
    this.data = undefined;
    this.eventType = undefined;
    sink.onEvent(data, eventType, this.lastEventId);
  }
}

/** True when `input` from `start` to `end` is a line that begins with `data:`. */
function isDataLine(input: string, start: number, end: number): boolean {
  return (
    end - start >= 5 &&
    input.charCodeAt(start) === LETTER_D &&
    input.charCodeAt(start + 1) === LETTER_A &&
    input.charCodeAt(start + 2) === LETTER_T &&
    input.charCodeAt(start + 3) === LETTER_A &&
    input.charCodeAt(start + 4) === COLON
  );
}
