/**
 * The edge's JSON body parser: strict `JSON.parse`, a 400 naming the parameter for a body nested deeper
 * than the steps that recurse over it allow (core/json-depth.ts), an empty body allowed, and large
 * bodies parsed one per turn of the event loop.
 */
import type { FastifyInstance } from 'fastify';
import { findTooDeepValue } from '../core/json-depth.ts';
import { invalidParameter } from '../core/service-error.ts';
import { toServiceError } from './error-envelope.ts';

/**
 * Bodies longer than this many characters are parsed one per turn of the event loop: one `JSON.parse`
 * cannot be cut (~3.5 ms per MB here), but several large bodies arriving together are not parsed back
 * to back, so other requests wait for at most one of them.
 */
const LARGE_BODY_CHARACTERS = 1024 * 1024;
const largeBodies: Array<() => void> = [];

/** Runs `parse` on a later turn of the event loop, after the large bodies queued before it, one per turn. */
function parseInTurn(parse: () => void): void {
  largeBodies.push(parse);
  if (largeBodies.length === 1) setImmediate(parseNextLargeBody);
}

function parseNextLargeBody(): void {
  try {
    largeBodies[0]?.();
  } finally {
    largeBodies.shift();
    if (largeBodies.length > 0) setImmediate(parseNextLargeBody);
  }
}

/** JSON bodies: strict parse, nesting at most MAX_JSON_DEPTH levels, empty body allowed (GET/DELETE/cancel calls send none). */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length > LARGE_BODY_CHARACTERS) return parseInTurn(() => parseJsonBody(text, done));
    parseJsonBody(text, done);
  });
}

function parseJsonBody(text: string, done: (error: Error | null, body?: unknown) => void): void {
  if (text.trim() === '') return done(null, undefined);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return done(toServiceError(error), undefined);
  }
  // Too deep for the steps that recurse over a body (core/json-depth.ts): a 400 naming the parameter.
  const tooDeep = findTooDeepValue(parsed);
  if (tooDeep !== undefined) return done(invalidParameter(tooDeep.param, tooDeep.message), undefined);
  done(null, parsed);
}
