/**
 * The route's pattern and Switchyard settings, read once per request. Fastify builds a new twelve-field
 * object on every read of `request.routeOptions`, and the edge's hooks, the metadata and the error
 * handler each needed it: five objects per request where one lookup will do.
 */
import type { FastifyRequest } from 'fastify';
import type { RouteFacts } from './request-context.ts';

export function routeFacts(request: FastifyRequest): RouteFacts {
  let facts = request.routeFactsCache;
  if (facts === undefined) {
    const options = request.routeOptions;
    facts = { url: options.url, settings: options.config.switchyard };
    request.routeFactsCache = facts;
  }
  return facts;
}
