/**
 * OTLP/JSON encoding of span records (the ExportTraceServiceRequest of the OTLP/HTTP JSON protocol,
 * as @opentelemetry/otlp-transformer writes it: hex ids, int64 times as decimal strings, span kinds
 * and status codes as numbers, the span flags' has-is-remote bits). Written straight into one string
 * per batch, at export time: no intermediate object per span or attribute. The resource and scope are
 * encoded once, when tracing starts.
 */
import type { Attributes } from '@opentelemetry/api';
import type { SpanEvent, SpanRecord } from './span-records.ts';
import type { TraceAttributeValue } from './trace-types.ts';

/** OTLP span flags: the W3C trace flags in the low byte, then "has is-remote" and "is remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/**
 * Per attribute name met so far (a fixed, small set; bounded anyway): its `{"key":"<name>","value":`
 * prefix, and the last value encoded under it with its whole encoding. Most values repeat from one
 * request to the next (method, route, model, provider, key, tier...): one lookup, one piece of string.
 */
interface KeyEncoding {
  prefix: string;
  last: unknown;
  encoded: string;
}
const keys = new Map<string, KeyEncoding>();
const KEY_LIMIT = 1024;

function attribute(name: string, value: unknown): string {
  let key = keys.get(name);
  if (key === undefined) {
    key = { prefix: `{"key":${JSON.stringify(name)},"value":`, last: undefined, encoded: '' };
    if (keys.size < KEY_LIMIT) keys.set(name, key);
  } else if (key.last === value) return key.encoded;
  const encoded = key.prefix + anyValue(value) + '}';
  if (typeof value !== 'object') {
    key.last = value;
    key.encoded = encoded;
  }
  return encoded;
}

function anyValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `{"stringValue":${JSON.stringify(value)}}`;
    case 'number':
      if (Number.isInteger(value)) return `{"intValue":${value}}`;
      return `{"doubleValue":${Number.isFinite(value) ? String(value) : JSON.stringify(String(value))}}`;
    case 'boolean':
      return value ? '{"boolValue":true}' : '{"boolValue":false}';
    default:
      if (Array.isArray(value)) return `{"arrayValue":{"values":[${value.map(anyValue).join(',')}]}}`;
      return '{}';
  }
}

function attributeList(names: readonly string[], values: readonly TraceAttributeValue[]): string {
  let out = '';
  for (let index = 0; index < names.length; index++) {
    if (index > 0) out += ',';
    out += attribute(names[index]!, values[index]);
  }
  return out;
}

function attributeObject(attributes: Record<string, unknown> | undefined): string {
  if (attributes === undefined) return '';
  let out = '';
  for (const name in attributes) {
    const value = attributes[name];
    if (value === undefined) continue;
    if (out !== '') out += ',';
    out += attribute(name, value);
  }
  return out;
}

/**
 * Milliseconds since the epoch (sub-millisecond fraction) as OTLP's int64 nanoseconds, a decimal string
 * (to the microsecond: the clock's own resolution here; 1.7e15 µs is well inside a double's integers).
 */
export function unixNano(milliseconds: number): string {
  return `"${Math.max(0, Math.round(milliseconds * 1000))}000"`;
}

function event(event: SpanEvent): string {
  const attributes = attributeObject(event.attributes);
  return `{${attributes === '' ? '' : `"attributes":[${attributes}],`}"name":${JSON.stringify(event.name)},"timeUnixNano":${unixNano(event.time)}}`;
}

/**
 * One span. Fields at their default (no events, no links, nothing dropped, status unset) are left out,
 * as the protobuf JSON mapping allows: a receiver reads them as zero and empty.
 */
function span(record: SpanRecord): string {
  const ids = record.ids;
  let out = `{"traceId":"${ids.traceId}","spanId":"${record.spanId}",`;
  if (record.parentSpanId !== '') out += `"parentSpanId":"${record.parentSpanId}",`;
  if (ids.traceState !== undefined) {
    const state = ids.traceState.serialize();
    if (state !== '') out += `"traceState":${JSON.stringify(state)},`;
  }
  out += `"name":${JSON.stringify(record.name)},"kind":${record.kind},"startTimeUnixNano":${unixNano(record.startTime)},"endTimeUnixNano":${unixNano(record.endTime)},"attributes":[${attributeList(record.names, record.values)}]`;
  if (record.droppedAttributes > 0) out += `,"droppedAttributesCount":${record.droppedAttributes}`;
  if (record.events !== undefined) out += `,"events":[${record.events.map(event).join(',')}]`;
  if (record.droppedEvents > 0) out += `,"droppedEventsCount":${record.droppedEvents}`;
  if (record.statusCode !== 0)
    out += `,"status":{"code":${record.statusCode}${record.statusMessage === undefined ? '' : `,"message":${JSON.stringify(record.statusMessage)}`}}`;
  const flags = (ids.sampled ? 1 : 0) | HAS_IS_REMOTE | (record.parentIsRemote ? IS_REMOTE : 0);
  return `${out},"flags":${flags}}`;
}

/** Encodes batches of span records under one resource and one instrumentation scope. */
export class OtlpJsonEncoder {
  /** The export request's content type. */
  readonly contentType = 'application/json';
  private readonly head: string;

  constructor(resource: Attributes, scopeName: string) {
    this.head =
      `{"resourceSpans":[{"resource":{"attributes":[${attributeObject(resource)}],"droppedAttributesCount":0},` +
      `"scopeSpans":[{"scope":{"name":${JSON.stringify(scopeName)}},"spans":[`;
  }

  /** The JSON body of one export request. */
  encode(records: readonly SpanRecord[]): string {
    const spans = new Array<string>(records.length);
    for (let index = 0; index < records.length; index++) spans[index] = span(records[index]!);
    return this.head + spans.join(',') + ']}]}]}';
  }
}
