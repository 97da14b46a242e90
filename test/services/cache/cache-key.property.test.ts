// The cache key's property test (issue 38 "Done when"): 100,000 random request pairs across 50
// organizations, on the key function itself. Pairs are built so that every relation occurs often:
// the same body reordered, one answer-changing field changed (top level or deep inside), only fields
// that cannot change the answer changed, another key, another organization, another endpoint or
// model version. Whether two requests may share an answer is decided here independently of the key
// (a deep comparison, not canonical JSON); the key must agree with it every time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cacheKeyOf, NON_ANSWER_FIELDS, type CacheKeyInput } from '../../../src/services/cache/cache-key.ts';
import { seededRandom } from '../../support/seeded-random.ts';

const PAIRS = 100_000;
const ORGANIZATIONS = 50;
const random = seededRandom(38);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Organizations, each with three keys; a third of them share one cache across their keys. */
const organizations = Array.from({ length: ORGANIZATIONS }, (_, index) => ({
  id: `org-${index}`,
  keys: [`key-${index}-a`, `key-${index}-b`, `key-${index}-c`],
  shared: index % 3 === 0,
}));
const ENDPOINTS = ['/v1/chat/completions', '/v1/messages', '/v1/responses'];
const MODELS = [
  { model: 'gpt-x', modelVersion: 'v1' },
  { model: 'gpt-x', modelVersion: 'v2' },
  { model: 'claude-y', modelVersion: 'v1' },
];

function randomValue(depth: number): unknown {
  const kind = random();
  if (depth > 2 || kind < 0.3) return pick([0, 1, 0.5, 2, 'a', 'b', 'hello', true, false, null]);
  if (kind < 0.6) return Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomValue(depth + 1));
  const object: Record<string, unknown> = {};
  for (let index = 0; index < 1 + Math.floor(random() * 3); index++)
    object[pick(['type', 'name', 'x', 'y', 'schema'])] = randomValue(depth + 1);
  return object;
}

function randomBody(): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: pick(['gpt-x', 'alias-x']),
    messages: [{ role: 'user', content: pick(['hi', 'hello', 'is it not raining?', 'is it raining?']) }],
  };
  if (random() < 0.5) body['temperature'] = pick([0, 0.0, 1]);
  if (random() < 0.4) body['tools'] = [{ type: 'function', function: { name: pick(['f', 'g']), parameters: randomValue(1) } }];
  if (random() < 0.3) body['response_format'] = { type: pick(['json_object', 'text']) };
  if (random() < 0.3) body['max_tokens'] = pick([10, 100]);
  if (random() < 0.3) body['provider_extra'] = randomValue(0);
  if (random() < 0.3) body['user'] = pick(['u1', 'u2']);
  if (random() < 0.3) body['metadata'] = { run: pick(['1', '2']) };
  if (random() < 0.3) body['stream'] = random() < 0.5;
  if (random() < 0.2) body['stream_options'] = { include_usage: random() < 0.5 };
  return body;
}

/** The same value with every object's keys in another order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).map(([name, inner]) => [name, reordered(inner)] as const);
  for (let index = entries.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [entries[index], entries[other]] = [entries[other]!, entries[index]!];
  }
  return Object.fromEntries(entries);
}

/** Changes one answer-changing field, possibly deep inside. */
function changedAnswerField(body: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(body);
  switch (Math.floor(random() * 5)) {
    case 0:
      copy['messages'] = [{ role: 'user', content: `${JSON.stringify(copy['messages'])} not` }];
      break;
    case 1:
      copy['temperature'] = copy['temperature'] === 0 ? 0.2 : 0;
      break;
    case 2:
      copy['tools'] = [{ type: 'function', function: { name: 'f', parameters: { changed: copy['tools'] ?? null } } }];
      break;
    case 3:
      copy['provider_extra'] = { wrapped: copy['provider_extra'] ?? 'new' };
      break;
    default:
      copy['seed'] = copy['seed'] === 1 ? 2 : 1;
  }
  return copy;
}

/** Changes only fields that cannot change the answer. */
function changedOtherFields(body: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(body);
  copy['user'] = `${String(copy['user'])}x`;
  copy['metadata'] = { run: 'other' };
  copy['stream'] = copy['stream'] !== true;
  copy['stream_options'] = { include_usage: true };
  copy['switchyard_cache'] = { ttl_seconds: 5 };
  return copy;
}

/** Deep equality of JSON values, key order ignored (independent of canonical JSON). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, index) => sameJson(item, (b as unknown[])[index]));
  const aKeys = Object.keys(a).filter((key) => (a as Record<string, unknown>)[key] !== undefined);
  const bKeys = Object.keys(b).filter((key) => (b as Record<string, unknown>)[key] !== undefined);
  return (
    aKeys.length === bKeys.length &&
    aKeys.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

function answerPart(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'model' && !NON_ANSWER_FIELDS.has(name)));
}

interface Sample extends CacheKeyInput {
  shared: boolean;
}

function randomSample(): Sample {
  const organization = pick(organizations);
  const model = pick(MODELS);
  return {
    organizationId: organization.id,
    keyId: pick(organization.keys),
    shareAcrossKeys: organization.shared,
    shared: organization.shared,
    endpoint: pick(ENDPOINTS),
    ...model,
    body: randomBody(),
  };
}

/** The second request of a pair: a relation to the first chosen at random. */
function partnerOf(first: Sample): Sample {
  const relation = random();
  if (relation < 0.25) return { ...first, body: reordered(first.body) as Record<string, unknown> };
  if (relation < 0.45) return { ...first, body: reordered(changedOtherFields(first.body)) as Record<string, unknown> };
  if (relation < 0.65) return { ...first, body: changedAnswerField(first.body) };
  if (relation < 0.75) {
    const organization = organizations.find((candidate) => candidate.id === first.organizationId)!;
    return { ...first, keyId: pick(organization.keys), body: reordered(first.body) as Record<string, unknown> };
  }
  if (relation < 0.85) {
    const organization = pick(organizations.filter((candidate) => candidate.id !== first.organizationId));
    return {
      ...first,
      organizationId: organization.id,
      keyId: pick(organization.keys),
      shareAcrossKeys: organization.shared,
      shared: organization.shared,
    };
  }
  if (relation < 0.9) return { ...first, ...pick(MODELS) };
  if (relation < 0.95) return { ...first, endpoint: pick(ENDPOINTS) };
  return randomSample();
}

test(`${PAIRS} random request pairs across ${ORGANIZATIONS} organizations: keys equal exactly when an answer may be shared`, () => {
  const counts = {
    crossOrganizationHits: 0,
    crossKeyHits: 0,
    differingFieldHits: 0,
    missedShares: 0,
    reorderedPairs: 0,
    reorderedHits: 0,
    sharedPairs: 0,
  };
  for (let pair = 0; pair < PAIRS; pair++) {
    const first = randomSample();
    const second = partnerOf(first);
    const sameKey = cacheKeyOf(first) === cacheKeyOf(second);
    const sameScope = first.organizationId === second.organizationId && (first.keyId === second.keyId || (first.shared && second.shared));
    const sameRequest =
      first.endpoint === second.endpoint &&
      first.model === second.model &&
      first.modelVersion === second.modelVersion &&
      sameJson(answerPart(first.body), answerPart(second.body));
    if (sameKey && first.organizationId !== second.organizationId) counts.crossOrganizationHits++;
    if (sameKey && first.organizationId === second.organizationId && first.keyId !== second.keyId && !first.shared) counts.crossKeyHits++;
    if (sameKey && !sameRequest) counts.differingFieldHits++;
    if (!sameKey && sameScope && sameRequest) counts.missedShares++;
    if (sameScope && sameRequest) counts.sharedPairs++;
    // The same body reordered, same caller: always the same key.
    const again = { ...first, body: reordered(first.body) as Record<string, unknown> };
    counts.reorderedPairs++;
    if (cacheKeyOf(again) === cacheKeyOf(first)) counts.reorderedHits++;
  }
  assert.equal(counts.crossOrganizationHits, 0, 'answers served to another organization');
  assert.equal(counts.crossKeyHits, 0, 'answers served to another key of an organization that does not share');
  assert.equal(counts.differingFieldHits, 0, 'hits between requests differing in an answer-changing field');
  assert.equal(counts.missedShares, 0, 'identical requests in one scope that missed');
  assert.equal(counts.reorderedHits, counts.reorderedPairs, 'reordered keys always hit');
  // The pairs really exercised hits: a test that never saw two equal keys proves nothing.
  assert.ok(counts.sharedPairs > PAIRS / 5, `only ${counts.sharedPairs} pairs could share an answer`);
});
