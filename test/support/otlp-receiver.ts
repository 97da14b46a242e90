/**
 * A real OTLP/HTTP trace receiver for tests: a node:http server on 127.0.0.1 (port 0) that accepts
 * `POST /v1/traces` with the JSON encoding (what Switchyard's exporter sends, as the SDK's
 * @opentelemetry/exporter-trace-otlp-http does), gzip or not, answers as a collector does (200 with an empty ExportTraceServiceResponse) and keeps every
 * span it decoded. Anything else is answered 404/415 and recorded as a rejected request.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

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
    if (!String(request.headers['content-type']).startsWith('application/json')) {
      this.rejected.push(`content-type ${request.headers['content-type']}`);
      return 415;
    }
    this.exportHeaders.push(request.headers);
    const exported = JSON.parse(body.toString('utf8')) as {
      resourceSpans?: Array<{
        resource?: { attributes?: OtlpKeyValue[] };
        scopeSpans?: Array<{ spans?: Array<Record<string, any>> }>;
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
          });
        }
      }
    }
    return 200;
  }
}
