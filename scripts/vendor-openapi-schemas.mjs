/**
 * Copies named component schemas, and every schema they reference, out of a published OpenAPI document
 * into a test fixture that names its source (file, title, version, sha256). Tests validate our bodies
 * against the fixture and never read the published document itself.
 *
 *   node scripts/vendor-openapi-schemas.mjs <published.json> <fixture.json> <SchemaName>...
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

const [source, target, ...roots] = process.argv.slice(2);
if (source === undefined || target === undefined || roots.length === 0) {
  console.error('usage: node scripts/vendor-openapi-schemas.mjs <published.json> <fixture.json> <SchemaName>...');
  process.exit(2);
}
const text = readFileSync(source, 'utf8');
const document = JSON.parse(text);
const all = document.components.schemas;
const picked = {};

/** Adds `name` and, depth first, every `#/components/schemas/...` it references. */
function pick(name) {
  if (name in picked) return;
  if (!(name in all)) throw new Error(`${source} has no schema ${name}`);
  picked[name] = all[name];
  visit(all[name]);
}
function visit(value) {
  if (Array.isArray(value)) value.forEach(visit);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')) pick(inner.slice(21));
      else visit(inner);
    }
  }
}
roots.forEach(pick);
const sorted = Object.fromEntries(
  Object.keys(picked)
    .sort()
    .map((name) => [name, picked[name]]),
);
const fixture = {
  'x-source': {
    file: basename(source),
    title: document.info?.title ?? null,
    version: document.info?.version ?? null,
    openapi: document.openapi,
    sha256: createHash('sha256').update(text).digest('hex'),
    roots,
  },
  components: { schemas: sorted },
};
writeFileSync(target, `${JSON.stringify(fixture, null, 1)}\n`);
console.log(`${target}: ${Object.keys(sorted).length} schemas from ${basename(source)}`);
