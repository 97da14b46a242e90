/**
 * GET /v1/openapi.json: an OpenAPI 3.1 description generated from the routes actually registered, so it
 * cannot fall out of step with them. Version string `1.0.0` (SPEC "Versioning" 2).
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { SwitchyardRouteConfig } from '../http/request-context.ts';

interface Operation {
  summary: string;
  operationId: string;
  security: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
}

const ERROR_RESPONSE = { description: 'Error in the SPEC envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };

export function registerOpenApiRoute(app: FastifyInstance, operator: string): void {
  const paths: Record<string, Record<string, Operation>> = {};
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = (route.config as { switchyard?: SwitchyardRouteConfig } | undefined)?.switchyard;
    if (!route.url.startsWith('/v1/') || config === undefined) return;
    const path = config.openapiPath ?? route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      (paths[path] ??= {})[method.toLowerCase()] = {
        summary: config.summary ?? '',
        operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase())}`,
        security: config.permission === null ? [] : [{ bearerAuth: [] }, { apiKeyHeader: [] }],
        responses: { '200': { description: 'Success; JSON bodies carry `_metadata`.' }, default: ERROR_RESPONSE },
      };
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
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['error', 'info_metadata'],
          properties: {
            error: {
              type: 'object',
              required: ['message', 'type', 'code'],
              properties: {
                message: { type: 'string' },
                type: { type: 'string' },
                code: { type: 'string' },
                param: { type: ['string', 'null'] },
                details: { type: ['object', 'null'] },
              },
            },
            info_metadata: { type: 'object' },
          },
        },
      },
    },
  }));
}
