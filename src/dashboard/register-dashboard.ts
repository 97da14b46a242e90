/**
 * Mounts the owners' dashboard on the app: the cookie plugin, the built front end (dist/dashboard-assets,
 * made by scripts/build-dashboard.mjs at `npm install`, served by @fastify/static, no CDN), the HTML
 * shell for every page under /dashboard, and the JSON API (api/index.ts: one plugin per resource).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notFound } from '../core/service-error.ts';
import { registerDashboardApi, type DashboardApiDependencies } from './api/index.ts';

export type { DashboardApiDependencies } from './api/index.ts';

/** The folder the build writes the bundle to, found from this file whether run from src/ or dist/src/. */
export function dashboardAssetsDirectory(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  return join(directory, 'dist', 'dashboard-assets');
}

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchyard dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script type="module" src="/dashboard/assets/dashboard.js"></script>
</head>
<body>
<div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

export async function registerDashboard(app: FastifyInstance, dependencies: DashboardApiDependencies): Promise<void> {
  // Its own encapsulated scope: the cookie parser and the session hook run for dashboard routes only,
  // never on the /v1 hot path (which ignores cookies entirely).
  await app.register(async (scope) => {
    await scope.register(fastifyCookie);
    await scope.register(fastifyStatic, {
      root: dashboardAssetsDirectory(),
      prefix: '/dashboard/assets/',
      decorateReply: false,
      index: false,
      wildcard: true,
    });
    // Every dashboard API answer (a new key's secret, a session's CSRF token, CSV, downloads, errors)
    // stays out of shared and disk caches, and is never sniffed into another type.
    scope.addHook('onSend', async (request, reply) => {
      if (request.url.startsWith('/dashboard/api/'))
        void reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
    });
    await registerDashboardApi(scope, dependencies);
    const shell = async (_request: unknown, reply: FastifyReply) =>
      reply.headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(SHELL);
    scope.get('/dashboard', shell);
    scope.get<{ Params: { '*': string } }>('/dashboard/*', async (request, reply) => {
      if (request.params['*'].startsWith('api/'))
        throw notFound('not_found', `Unknown dashboard API route: ${request.method} ${request.url.split('?')[0]}.`);
      return shell(request, reply);
    });
  });
}
