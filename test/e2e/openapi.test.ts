// GET /v1/openapi.json: a valid OpenAPI 3.1 document (checked by a standard validator) with request
// and response schemas for every operation the server registers, and every $ref resolving.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { OPERATION_SCHEMAS } from '../../src/routes/openapi-schemas.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

interface OpenApiOperation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown> };
}

/** Every `$ref` string anywhere in `value`. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.push(item);
      else refsIn(item, found);
    }
  }
  return found;
}

describe('GET /v1/openapi.json', () => {
  let server: TestServer;
  let document: OpenApiDocument;
  before(async () => {
    server = await startTestServer();
    const response = await fetch(`${server.baseUrl}/openapi.json`);
    assert.equal(response.status, 200);
    document = (await response.json()) as OpenApiDocument;
  });
  after(async () => {
    await server.close();
  });

  test('is a valid OpenAPI 3.1 document for @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
    assert.equal(document.info.version, '1.0.0');
  });

  test('every operation has a 200 schema, request bodies where it takes one, and declared path parameters', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, operation })),
    );
    assert.ok(operations.length >= 20, `only ${operations.length} operations`);
    for (const { key, path, operation } of operations) {
      const schemas = OPERATION_SCHEMAS[key];
      assert.ok(schemas !== undefined, `${key} has no schemas in openapi-schemas.ts`);
      const success = Object.values(operation.responses['200']?.content ?? {});
      assert.ok(success.length > 0 && success.every((media) => media.schema !== undefined), `${key}: no 200 schema`);
      assert.ok(operation.responses['default'] !== undefined, `${key}: no error response`);
      if (key.startsWith('POST ') && !key.endsWith('/cancel')) assert.ok(operation.requestBody !== undefined, `${key}: no request body`);
      for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])) {
        assert.ok(
          operation.parameters?.some((parameter) => parameter.in === 'path' && parameter.name === name),
          `${key}: path parameter ${name} undeclared`,
        );
      }
    }
    // Nothing in the table that the server does not serve.
    const served = new Set(operations.map((operation) => operation.key));
    assert.deepEqual(
      Object.keys(OPERATION_SCHEMAS).filter((key) => !served.has(key)),
      [],
    );
  });

  test('every $ref names a component schema', () => {
    const names = new Set(Object.keys(document.components.schemas).map((name) => `#/components/schemas/${name}`));
    const broken = refsIn(document).filter((ref) => !names.has(ref));
    assert.deepEqual(broken, []);
  });
});
