/**
 * The response cache's key: a SHA-256 over the RFC 8785 canonical JSON (the `canonicalize` package,
 * https://www.rfc-editor.org/rfc/rfc8785) of who may share the answer, what was asked and of whom:
 *
 * - the organization, and the key unless the organization shares one cache across its keys;
 * - the endpoint (each format answers in its own wire shape and may read fields the others do not);
 * - the resolved model and its deployment version (`modelVersionOf`: the model's id, provider(s) and
 *   upstream model names, so that pointing a model at another backend never serves the old answers);
 * - every field of the request body except those that cannot change the answer (`NON_ANSWER_FIELDS`),
 *   unknown provider extras included: a field we did not think of makes two requests miss, never hit.
 *
 * Canonical JSON makes the key independent of key order and number spelling (`1.0` and `1`).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * Top-level request fields left out of the key: the transport (`stream`, `stream_options`), caller
 * bookkeeping (`user`, `metadata`) and the cache's own directives (`switchyard_cache`).
 */
export const NON_ANSWER_FIELDS: ReadonlySet<string> = new Set(['stream', 'stream_options', 'user', 'metadata', 'switchyard_cache']);

/** What the key is made of. */
export interface CacheKeyInput {
  organizationId: string;
  /** The calling key's id; left out of the key when `shareAcrossKeys`. */
  keyId: string;
  shareAcrossKeys: boolean;
  /** Request path, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** The resolved model's id (aliases resolved). */
  model: string;
  /** `modelVersionOf` the resolved model. */
  modelVersion: string;
  /** The request body as the client sent it (a JSON object). */
  body: Readonly<Record<string, unknown>>;
}

/** The answer-changing fields of a body: every top-level field but `NON_ANSWER_FIELDS` and `model` (resolved separately). */
export function answerFields(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name === 'model' || NON_ANSWER_FIELDS.has(name) || value === undefined) continue;
    fields[name] = value;
  }
  return fields;
}

/** The key: 64 hex characters (also the `x-switchyard-cache-key` id). */
export function cacheKeyOf(input: CacheKeyInput): string {
  const scope = input.shareAcrossKeys ? { organization: input.organizationId } : { organization: input.organizationId, key: input.keyId };
  const canonical = canonicalize({
    version: 1,
    scope,
    endpoint: input.endpoint,
    model: input.model,
    modelVersion: input.modelVersion,
    request: answerFields(input.body),
  });
  // canonicalize returns undefined only for a top-level undefined, never for an object.
  return createHash('sha256').update(canonical!).digest('hex');
}

/** What identifies a model's backends: a change to any of them is a new deployment version. */
export interface ModelIdentity {
  id: string;
  provider: string;
  upstreamModel?: string | undefined;
  deployments?: readonly unknown[] | undefined;
}

/** A short digest of the model's backends (16 hex characters). */
export function modelVersionOf(model: ModelIdentity): string {
  const canonical = canonicalize({
    id: model.id,
    provider: model.provider,
    upstreamModel: model.upstreamModel ?? null,
    deployments: model.deployments ?? null,
  });
  return createHash('sha256').update(canonical!).digest('hex').slice(0, 16);
}
