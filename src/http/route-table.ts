/**
 * Remembers every registered route pattern so that a request with a known path but an unsupported
 * method is answered 405 (with `allow`) instead of 404. Fastify itself only knows "not found".
 */
import type { SwitchyardRouteConfig } from './request-context.ts';

type RouteFormat = NonNullable<SwitchyardRouteConfig['format']>;

export class RouteTable {
  private readonly routes: Array<{ method: string; pattern: RegExp; format: RouteFormat | undefined }> = [];

  /** `format`: the route's client format (its clients' error body), for answers about a path near it. */
  add(methods: string | string[], url: string, format?: RouteFormat): void {
    const source = url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    for (const method of Array.isArray(methods) ? methods : [methods]) this.routes.push({ method, pattern, format });
  }

  /** Methods registered for this path (without query string), other than the wildcard OPTIONS route. */
  methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.method !== 'OPTIONS' && route.method !== 'HEAD' && route.pattern.test(path)) methods.add(route.method);
    }
    return [...methods];
  }

  /** The client format of the first route matching this path, if it has one. */
  formatFor(path: string): RouteFormat | undefined {
    return this.routes.find((route) => route.format !== undefined && route.pattern.test(path))?.format;
  }
}
