/**
 * OTLP/HTTP protobuf encoding of span records (an `ExportTraceServiceRequest`, the official
 * opentelemetry-proto messages, `application/x-protobuf`), written by hand into one preallocated
 * buffer at export time: varints, fixed64 times and strings straight into bytes, no message object per
 * span or attribute. The resource and the instrumentation scope are encoded once, when tracing
 * starts; an attribute whose value repeats from the last span (most of them) is one copy of its cached
 * bytes. Fields at their default (empty, zero) are left out, as proto3 writes them.
 * The bytes are written by proto-writer.ts.
 */
import type { Attributes } from '@opentelemetry/api';
import type { SpanEvent, SpanRecord } from './span-records.ts';
import { ProtoWriter, idCache } from './proto-writer.ts';
import type { TraceAttributeValue } from './trace-types.ts';

/** OTLP span flags: the W3C trace flags in the low byte, then "has is-remote" and "is remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** Field tags: (field number << 3) | wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
const TAG = {
  // ExportTraceServiceRequest.resource_spans, ResourceSpans.resource, ScopeSpans.scope, Resource.attributes
  first: 0x0a,
  // ResourceSpans.scope_spans, ScopeSpans.spans
  second: 0x12,
  span: {
    traceId: 0x0a,
    spanId: 0x12,
    traceState: 0x1a,
    parentSpanId: 0x22,
    name: 0x2a,
    kind: 0x30,
    startTime: 0x39,
    endTime: 0x41,
    attributes: 0x4a,
    droppedAttributes: 0x50,
    events: 0x5a,
    droppedEvents: 0x60,
    status: 0x7a,
    /** Field 16, fixed32: two bytes of tag. */
    flags: [0x85, 0x01],
  },
  event: { time: 0x09, name: 0x12, attributes: 0x1a },
  status: { message: 0x12, code: 0x18 },
  keyValue: { key: 0x0a, value: 0x12 },
  anyValue: { string: 0x0a, bool: 0x10, int: 0x18, double: 0x21, array: 0x2a },
  arrayValue: { values: 0x0a },
  scope: { name: 0x0a },
} as const;

/** An AnyValue's fields (the message's content, without its own tag and length). */
function anyValue(writer: ProtoWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      writer.byte(TAG.anyValue.string);
      writer.string(value);
      return;
    case 'number':
      if (Number.isSafeInteger(value)) {
        writer.byte(TAG.anyValue.int);
        writer.int64(value);
      } else {
        writer.byte(TAG.anyValue.double);
        writer.double(value);
      }
      return;
    case 'boolean':
      writer.byte(TAG.anyValue.bool);
      writer.byte(value ? 1 : 0);
      return;
    default:
      if (Array.isArray(value)) {
        writer.byte(TAG.anyValue.array);
        const array = writer.open(1);
        for (const item of value) {
          writer.byte(TAG.arrayValue.values);
          const start = writer.open(1);
          anyValue(writer, item);
          writer.close(start, 1);
        }
        writer.close(array, 1);
      }
  }
}

/** One KeyValue's fields. */
function keyValue(writer: ProtoWriter, name: string, value: unknown): void {
  writer.byte(TAG.keyValue.key);
  writer.string(name);
  writer.byte(TAG.keyValue.value);
  const start = writer.open(1);
  anyValue(writer, value);
  writer.close(start, 1);
}

/**
 * Per attribute name met so far (a fixed, small set; bounded anyway): the last primitive value encoded
 * under it and its KeyValue's length and bytes (without the tag, which differs between a span's and an
 * event's attributes). Most values repeat from one span to the next.
 */
interface KeyEncoding {
  last: unknown;
  encoded: Uint8Array | undefined;
}
const KEY_LIMIT = 1024;

/** Encodes batches of span records under one resource and one instrumentation scope. */
export class OtlpProtoEncoder {
  /** The export request's content type. */
  readonly contentType = 'application/x-protobuf';
  private readonly writer = new ProtoWriter(64 * 1024);
  /** The Resource and InstrumentationScope fields, each with its tag and length. */
  private readonly resource: Uint8Array;
  private readonly scope: Uint8Array;
  private readonly keys = new Map<string, KeyEncoding>();
  private readonly traceIds = idCache(16);
  private readonly spanIds = idCache(8);
  private readonly parentIds = idCache(8);

  constructor(resource: Attributes, scopeName: string) {
    const writer = this.writer;
    writer.byte(TAG.first);
    const start = writer.open(2);
    for (const name in resource) {
      const value = resource[name];
      if (value === undefined) continue;
      writer.byte(TAG.first);
      const attribute = writer.open(1);
      keyValue(writer, name, value);
      writer.close(attribute, 1);
    }
    writer.close(start, 2);
    this.resource = Uint8Array.prototype.slice.call(writer.buffer, 0, writer.at);
    writer.reset();
    writer.byte(TAG.first);
    const scope = writer.open(1);
    writer.byte(TAG.scope.name);
    writer.string(scopeName);
    writer.close(scope, 1);
    this.scope = Uint8Array.prototype.slice.call(writer.buffer, 0, writer.at);
    writer.reset();
  }

  /** One attribute, tag included: cached bytes when its value is the last one seen under its name. */
  private attribute(tag: number, name: string, value: unknown): void {
    const writer = this.writer;
    writer.byte(tag);
    let key = this.keys.get(name);
    if (key !== undefined && key.last === value && key.encoded !== undefined) {
      writer.bytes(key.encoded);
      return;
    }
    const from = writer.at;
    const start = writer.open(1);
    keyValue(writer, name, value);
    writer.close(start, 1);
    if (typeof value === 'object') return;
    if (key === undefined) {
      if (this.keys.size >= KEY_LIMIT) return;
      key = { last: undefined, encoded: undefined };
      this.keys.set(name, key);
    }
    key.last = value;
    key.encoded = Uint8Array.prototype.slice.call(writer.buffer, from, writer.at);
  }

  private event(event: SpanEvent): void {
    const writer = this.writer;
    writer.byte(TAG.span.events);
    const start = writer.open(1);
    writer.byte(TAG.event.time);
    writer.unixNano(event.time);
    writer.byte(TAG.event.name);
    writer.string(event.name);
    const attributes = event.attributes;
    if (attributes !== undefined)
      for (const name in attributes) {
        const value = attributes[name];
        if (value !== undefined) this.attribute(TAG.event.attributes, name, value);
      }
    writer.close(start, 1);
  }

  private span(record: SpanRecord): void {
    const writer = this.writer;
    const ids = record.ids;
    writer.byte(TAG.second);
    const start = writer.open(2);
    writer.byte(TAG.span.traceId);
    writer.hexBytes(ids.traceId, this.traceIds);
    writer.byte(TAG.span.spanId);
    writer.hexBytes(record.spanId, this.spanIds);
    if (ids.traceState !== undefined) {
      const state = ids.traceState.serialize();
      if (state !== '') {
        writer.byte(TAG.span.traceState);
        writer.string(state);
      }
    }
    if (record.parentSpanId !== '') {
      writer.byte(TAG.span.parentSpanId);
      writer.hexBytes(record.parentSpanId, this.parentIds);
    }
    writer.byte(TAG.span.name);
    writer.string(record.name);
    writer.byte(TAG.span.kind);
    writer.varint(record.kind);
    writer.byte(TAG.span.startTime);
    writer.unixNano(record.startTime);
    writer.byte(TAG.span.endTime);
    writer.unixNano(record.endTime);
    const names = record.names;
    const values: readonly TraceAttributeValue[] = record.values;
    for (let index = 0; index < names.length; index++) this.attribute(TAG.span.attributes, names[index]!, values[index]);
    if (record.droppedAttributes > 0) {
      writer.byte(TAG.span.droppedAttributes);
      writer.varint(record.droppedAttributes);
    }
    if (record.events !== undefined) for (const event of record.events) this.event(event);
    if (record.droppedEvents > 0) {
      writer.byte(TAG.span.droppedEvents);
      writer.varint(record.droppedEvents);
    }
    if (record.statusCode !== 0 || record.statusMessage !== undefined) {
      writer.byte(TAG.span.status);
      const status = writer.open(1);
      if (record.statusMessage !== undefined && record.statusMessage !== '') {
        writer.byte(TAG.status.message);
        writer.string(record.statusMessage);
      }
      if (record.statusCode !== 0) {
        writer.byte(TAG.status.code);
        writer.varint(record.statusCode);
      }
      writer.close(status, 1);
    }
    writer.byte(TAG.span.flags[0]);
    writer.byte(TAG.span.flags[1]);
    writer.fixed32((ids.sampled ? 1 : 0) | HAS_IS_REMOTE | (record.parentIsRemote ? IS_REMOTE : 0));
    writer.close(start, 2);
  }

  /** The protobuf body of one export request (a copy: the encoder's buffer is reused by the next batch). */
  encode(records: readonly SpanRecord[]): Buffer {
    const writer = this.writer;
    writer.reset();
    writer.byte(TAG.first);
    const resourceSpans = writer.open(3);
    writer.bytes(this.resource);
    writer.byte(TAG.second);
    const scopeSpans = writer.open(3);
    writer.bytes(this.scope);
    for (const record of records) this.span(record);
    writer.close(scopeSpans, 3);
    writer.close(resourceSpans, 3);
    const body = Buffer.allocUnsafe(writer.at);
    writer.buffer.copy(body, 0, 0, writer.at);
    return body;
  }
}
