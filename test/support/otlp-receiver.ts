/**
 * A real OTLP/HTTP trace receiver for tests: a node:http server on 127.0.0.1 (port 0) that accepts
 * `POST /v1/traces` in either encoding, protobuf (`application/x-protobuf`, decoded by protobufjs
 * with the official opentelemetry-proto files in ./otlp-proto/) or JSON (`application/json`), gzip or
 * not, answers as a collector does (200 with an empty ExportTraceServiceResponse) and keeps every
 * span it decoded. Anything else is answered 404/415 and recorded as a rejected request.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/** OTLP span kinds (the JSON encoding writes the enum's number). */
export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
/** OTLP status codes. */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

export type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; attributes: Record<string, AttributeValue>; timeUnixNano: bigint }>;
  status: { code: number; message: string };
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  /** `service.name` and the rest of the resource. */
  resource: Record<string, AttributeValue>;
  /** The instrumentation scope's name. */
  scope: string;
  /** The span flags (W3C trace flags, has-is-remote 0x100, is-remote 0x200). */
  flags: number;
  /** '' when none. */
  traceState: string;
  droppedAttributesCount: number;
  droppedEventsCount: number;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, AttributeValue> }>;
  /** How the export that carried it was encoded. */
  encoding: 'protobuf' | 'json';
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
}

interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

function decodeValue(value: OtlpAnyValue | undefined): AttributeValue {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(decodeValue);
  return undefined;
}

function decodeAttributes(attributes: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const decoded: Record<string, AttributeValue> = {};
  for (const attribute of attributes ?? []) decoded[attribute.key] = decodeValue(attribute.value);
  return decoded;
}

/** The JSON encoding writes ids as hex; accept base64 too (some encoders follow the protobuf JSON mapping). */
function hexId(id: string | undefined): string {
  if (id === undefined || id === '') return '';
  if (/^[0-9a-f]+$/i.test(id)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

/** ExportTraceServiceRequest from the official .proto files (test/support/otlp-proto/). */
const PROTO_DIR = join(import.meta.dirname, 'otlp-proto');
const protoRoot = new protobuf.Root();
protoRoot.resolvePath = (_origin, target) => join(PROTO_DIR, target);
protoRoot.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
const ExportTraceServiceRequest = protoRoot.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

/**
 * A decoded protobuf export as a plain object in the protobuf JSON mapping's shape (camelCase fields,
 * enums as numbers, 64-bit integers as decimal strings, bytes as hex), so both encodings are read by
 * the same code below.
 */
function decodeProtobuf(body: Buffer): Record<string, any> {
  const message = ExportTraceServiceRequest.decode(body);
  const plain = ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, bytes: Array, defaults: false });
  return hexBytes(plain) as Record<string, any>;
}

/** Byte arrays (ids) to hex strings, everywhere in a decoded message. */
function hexBytes(value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((item) => typeof item === 'number')) return Buffer.from(value as number[]).toString('hex');
    return value.map(hexBytes);
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = hexBytes(item);
    return out;
  }
  return value;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not a JSON trace export (wrong path, content type or body). */
  readonly rejected: string[] = [];
  /** Headers of every accepted export request. */
  readonly exportHeaders: Array<IncomingMessage['headers']> = [];
  private server: Server | undefined;
  private port = 0;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      void this.handle(request).then(
        (status) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(status === 200 ? '{}' : '{"message":"not an OTLP/HTTP JSON trace export"}');
        },
        (error: unknown) => {
          this.rejected.push(String(error));
          response.writeHead(400, { 'content-type': 'application/json' });
          response.end('{}');
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (`/v1/traces` is appended). */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }

  private async handle(request: IncomingMessage): Promise<number> {
    const body = await readBody(request);
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      this.rejected.push(`${request.method} ${request.url}`);
      return 404;
    }
    const contentType = String(request.headers['content-type']);
    const encoding = contentType.startsWith('application/x-protobuf')
      ? 'protobuf'
      : contentType.startsWith('application/json')
        ? 'json'
        : undefined;
    if (encoding === undefined) {
      this.rejected.push(`content-type ${request.headers['content-type']}`);
      return 415;
    }
    this.exportHeaders.push(request.headers);
    const exported = (encoding === 'protobuf' ? decodeProtobuf(body) : JSON.parse(body.toString('utf8'))) as {
      resourceSpans?: Array<{
        resource?: { attributes?: OtlpKeyValue[] };
        scopeSpans?: Array<{ scope?: { name?: string }; spans?: Array<Record<string, any>> }>;
      }>;
    };
    for (const resourceSpans of exported.resourceSpans ?? []) {
      const resource = decodeAttributes(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: hexId(span['traceId']),
            spanId: hexId(span['spanId']),
            parentSpanId: hexId(span['parentSpanId']),
            name: String(span['name']),
            kind: Number(span['kind']),
            attributes: decodeAttributes(span['attributes']),
            events: ((span['events'] ?? []) as Array<Record<string, any>>).map((event) => ({
              name: String(event['name']),
              attributes: decodeAttributes(event['attributes']),
              timeUnixNano: BigInt(event['timeUnixNano']),
            })),
            status: { code: Number(span['status']?.code ?? 0), message: String(span['status']?.message ?? '') },
            startTimeUnixNano: BigInt(span['startTimeUnixNano']),
            endTimeUnixNano: BigInt(span['endTimeUnixNano']),
            resource,
            scope: String(scopeSpans.scope?.name ?? ''),
            flags: Number(span['flags'] ?? 0),
            traceState: String(span['traceState'] ?? ''),
            droppedAttributesCount: Number(span['droppedAttributesCount'] ?? 0),
            droppedEventsCount: Number(span['droppedEventsCount'] ?? 0),
            links: ((span['links'] ?? []) as Array<Record<string, any>>).map((link) => ({
              traceId: hexId(link['traceId']),
              spanId: hexId(link['spanId']),
              attributes: decodeAttributes(link['attributes']),
            })),
            encoding,
          });
        }
      }
    }
    return 200;
  }
}
