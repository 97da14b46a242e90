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

/** `{"key":"<name>","value":` of every attribute name met so far (a fixed, small set: bounded anyway). */
const keyPrefixes = new Map<string, string>();
const KEY_PREFIX_LIMIT = 1024;

function keyPrefix(name: string): string {
  let prefix = keyPrefixes.get(name);
  if (prefix === undefined) {
    prefix = `{"key":${JSON.stringify(name)},"value":`;
    if (keyPrefixes.size < KEY_PREFIX_LIMIT) keyPrefixes.set(name, prefix);
  }
  return prefix;
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
    out += keyPrefix(names[index]!) + anyValue(values[index]) + '}';
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
    out += keyPrefix(name) + anyValue(value) + '}';
  }
  return out;
}

/** Milliseconds since the epoch (sub-millisecond fraction) as OTLP's int64 nanoseconds, a decimal string. */
export function unixNano(milliseconds: number): string {
  let whole = Math.floor(milliseconds);
  let nanos = Math.round((milliseconds - whole) * 1e6);
  if (nanos >= 1e6) {
    whole++;
    nanos -= 1e6;
  }
  if (whole <= 0) return `"${nanos}"`;
  return `"${whole}${String(nanos).padStart(6, '0')}"`;
}

function event(event: SpanEvent): string {
  return `{"attributes":[${attributeObject(event.attributes)}],"name":${JSON.stringify(event.name)},"timeUnixNano":${unixNano(event.time)},"droppedAttributesCount":0}`;
}

function span(record: SpanRecord): string {
  const ids = record.ids;
  const parent = record.parentSpanId === '' ? '' : `"parentSpanId":"${record.parentSpanId}",`;
  const state = ids.traceState === undefined ? '' : ids.traceState.serialize();
  const traceState = state === '' ? '' : `"traceState":${JSON.stringify(state)},`;
  const flags = (ids.sampled ? 1 : 0) | HAS_IS_REMOTE | (record.parentIsRemote ? IS_REMOTE : 0);
  const status =
    record.statusCode === 0
      ? '{"code":0}'
      : `{"code":${record.statusCode}${record.statusMessage === undefined ? '' : `,"message":${JSON.stringify(record.statusMessage)}`}}`;
  const events = record.events === undefined ? '' : record.events.map(event).join(',');
  return (
    `{"traceId":"${ids.traceId}","spanId":"${record.spanId}",${parent}${traceState}"name":${JSON.stringify(record.name)},` +
    `"kind":${record.kind},"startTimeUnixNano":${unixNano(record.startTime)},"endTimeUnixNano":${unixNano(record.endTime)},` +
    `"attributes":[${attributeList(record.names, record.values)}],"droppedAttributesCount":${record.droppedAttributes},` +
    `"events":[${events}],"droppedEventsCount":${record.droppedEvents},"status":${status},"links":[],"droppedLinksCount":0,"flags":${flags}}`
  );
}

/** Encodes batches of span records under one resource and one instrumentation scope. */
export class OtlpJsonEncoder {
  private readonly head: string;

  constructor(resource: Attributes, scopeName: string) {
    this.head =
      `{"resourceSpans":[{"resource":{"attributes":[${attributeObject(resource)}],"droppedAttributesCount":0},` +
      `"scopeSpans":[{"scope":{"name":${JSON.stringify(scopeName)}},"spans":[`;
  }

  /** The JSON body of one export request. */
  encode(records: readonly SpanRecord[]): string {
    let body = this.head;
    for (let index = 0; index < records.length; index++) {
      if (index > 0) body += ',';
      body += span(records[index]!);
    }
    return body + ']}]}]}';
  }
}
