/**
 * GET /v1/openapi.json: an OpenAPI 3.1 description generated from the routes actually registered, so it
 * cannot fall out of step with them, with each operation's request and response schemas from
 * openapi-schemas.ts. Version string `1.0.0` (SPEC "Versioning" 2).
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { SwitchyardRouteConfig } from '../http/request-context.ts';
import { COMPONENT_SCHEMAS, OPERATION_SCHEMAS, type OperationSchemas } from './openapi-schemas.ts';

interface Operation {
  summary: string;
  operationId: string;
  security: Array<Record<string, string[]>>;
  parameters?: Array<Record<string, unknown>>;
  requestBody?: Record<string, unknown>;
  responses: Record<string, unknown>;
}

const ERROR_RESPONSE = {
  description: 'Error in the SPEC envelope',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
};

/** Path parameters from the `{name}` segments, then the operation's query parameters. */
function parametersOf(path: string, schemas: OperationSchemas | undefined): Array<Record<string, unknown>> {
  const parameters: Array<Record<string, unknown>> = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  for (const [name, schema] of Object.entries(schemas?.query ?? {})) parameters.push({ name, in: 'query', required: false, schema });
  return parameters;
}

function operationOf(method: string, path: string, config: SwitchyardRouteConfig): Operation {
  const schemas = OPERATION_SCHEMAS[`${method} ${path}`];
  const content: Record<string, unknown> = {
    [schemas?.responseContentType ?? 'application/json']: { schema: schemas?.response ?? { type: 'object' } },
  };
  if (schemas?.streams === true)
    content['text/event-stream'] = { schema: { type: 'string', description: 'Server-sent events, with `stream: true`.' } };
  const operation: Operation = {
    summary: config.summary ?? '',
    operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase())}`,
    security: config.permission === null ? [] : [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    responses: { '200': { description: 'Success; JSON bodies carry `_metadata`.', content }, default: ERROR_RESPONSE },
  };
  const parameters = parametersOf(path, schemas);
  if (parameters.length > 0) operation.parameters = parameters;
  if (schemas?.requestBody !== undefined) {
    operation.requestBody = {
      required: true,
      content: { [schemas.multipart === true ? 'multipart/form-data' : 'application/json']: { schema: schemas.requestBody } },
    };
  }
  return operation;
}

export function registerOpenApiRoute(app: FastifyInstance, operator: string): void {
  const paths: Record<string, Record<string, Operation>> = {};
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = (route.config as { switchyard?: SwitchyardRouteConfig } | undefined)?.switchyard;
    if (!route.url.startsWith('/v1/') || config === undefined) return;
    const path = config.openapiPath ?? route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      (paths[path] ??= {})[method.toLowerCase()] = operationOf(method, path, config);
    }
  });

  app.get('/v1/openapi.json', { config: { switchyard: { permission: null, summary: 'This description.' } } }, async () => ({
    openapi: '3.1.0',
    info: { title: `${operator} AI model service`, version: '1.0.0' },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'API_KEY' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
      schemas: COMPONENT_SCHEMAS,
    },
  }));
}
