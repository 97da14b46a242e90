/**
 * The process logger (pino). Logs never carry any part of a key, a session token or an upstream key,
 * at any level: the headers that hold them are censored wherever a logged object carries
 * request or response headers (Fastify's `req`/`res`, @fastify/multipart's `busboyOptions` at trace,
 * undici errors), and provider configs never log their `apiKey`.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

const SECRET_HEADERS = ['authorization', '"x-api-key"', 'cookie', '"set-cookie"', '"proxy-authorization"', '"x-switchyard-internal"'];

/** Where headers appear in what Switchyard and its libraries log, up to two levels deep. */
const HEADER_HOLDERS = ['headers', '*.headers', '*.*.headers', 'req.headers', 'res.headers', 'request.headers', 'response.headers'];

export const LOG_REDACT_PATHS: string[] = [
  ...HEADER_HOLDERS.flatMap((holder) =>
    SECRET_HEADERS.map((header) => (header.startsWith('"') ? `${holder}[${header}]` : `${holder}.${header}`)),
  ),
  'apiKey',
  '*.apiKey',
  'apiKeyValue',
  '*.apiKeyValue',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
