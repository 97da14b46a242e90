/**
 * Answers for the mistakes a newcomer makes first, each a SPEC error that says what to change:
 * a base URL with `/v1` missing (OpenAI SDK) or doubled (the Anthropic SDK adds `/v1` itself), and an
 * `Authorization` header that carries the key without the `Bearer` scheme.
 */
import { ServiceError } from '../core/service-error.ts';
import type { RouteTable } from './route-table.ts';

/** The path the client probably meant, and why, when the one it sent has `/v1` missing or doubled. */
function intendedPath(path: string, routes: RouteTable): { path: string; advice: string } | undefined {
  if (path.startsWith('/v1/v1/') && routes.methodsFor(path.slice(3)).length > 0) {
    return {
      path: path.slice(3),
      advice:
        'The path has /v1 twice: the base URL ends with /v1 and the client added another. The Anthropic SDK adds /v1 itself: give it the address without /v1.',
    };
  }
  if (!path.startsWith('/v1/') && path !== '/v1' && routes.methodsFor(`/v1${path}`).length > 0) {
    return {
      path: `/v1${path}`,
      advice: "The base URL probably lacks /v1: the OpenAI SDK's baseURL is the address followed by /v1 (e.g. http://127.0.0.1:8080/v1).",
    };
  }
  return undefined;
}

/**
 * The 404 for a path no route has, saying which path was probably meant; `intended` is that path, so
 * that the answer can take its route's client format (an Anthropic client reads its own error body).
 */
export function unknownRouteError(method: string, path: string, routes: RouteTable): { error: ServiceError; intended: string | undefined } {
  const intended = intendedPath(path, routes);
  const hint = intended === undefined ? '' : ` Did you mean ${method} ${intended.path}? ${intended.advice}`;
  return {
    error: new ServiceError({
      status: 404,
      type: 'invalid_request_error',
      code: 'not_found',
      message: `Unknown route: ${method} ${path}.${hint} See GET /v1/openapi.json for the routes this server has.`,
    }),
    intended: intended?.path,
  };
}

/**
 * When no key was found, but an `Authorization` header was sent without the `Bearer` scheme (the key
 * alone, or another scheme), the 401 says so instead of "No API key provided".
 */
export function unusableAuthorization(authorization: string | undefined): ServiceError | undefined {
  const value = authorization?.trim();
  // Nothing, or a bare "Bearer": no key was sent, which the usual "No API key provided" says.
  if (value === undefined || value === '' || /^bearer$/i.test(value)) return undefined;
  const scheme = /^(\S+)\s+\S/.exec(value)?.[1];
  const sent = scheme === undefined ? 'the key alone, without a scheme' : `the scheme "${scheme}"`;
  return new ServiceError({
    status: 401,
    type: 'auth_error',
    code: 'missing_api_key',
    message: `The Authorization header carries ${sent}. Send the key as "Authorization: Bearer <API_KEY>" (or in the x-api-key header).`,
  });
}
