/**
 * `GET /`: where a newcomer who opens the server's address lands. A browser (it accepts text/html) is
 * redirected to the owners' dashboard; any other client gets a JSON body naming the API's base URLs,
 * the dashboard and the OpenAPI description, instead of a bare 404.
 */
import type { FastifyInstance } from 'fastify';

export function registerRootRoute(app: FastifyInstance, options: { dashboard: boolean }): void {
  app.get('/', { config: { switchyard: { permission: null } } }, async (request, reply) => {
    const origin = request.publicOrigin();
    if (options.dashboard && (request.headers.accept ?? '').includes('text/html')) return reply.redirect('/dashboard', 302);
    return reply.send({
      object: 'switchyard',
      message: `This is a Switchyard API server. OpenAI SDKs use the base URL ${origin}/v1; Anthropic SDKs use ${origin} (they add /v1 themselves).${options.dashboard ? ` Owners sign in at ${origin}/dashboard.` : ''}`,
      openai_base_url: `${origin}/v1`,
      anthropic_base_url: origin,
      ...(options.dashboard ? { dashboard: `${origin}/dashboard` } : {}),
      openapi: `${origin}/v1/openapi.json`,
    });
  });
}
