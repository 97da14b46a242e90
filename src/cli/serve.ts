/**
 * `switchyard serve`: start the HTTP service, print the bootstrap key once, shut down gracefully on
 * SIGTERM/SIGINT (stop accepting, finish in-flight requests within the grace period, close storage).
 */
import type { Config } from '../config/index.ts';
import { startRuntime } from '../runtime.ts';
import { setPasswordLink } from './owners.ts';

export async function serve(config: Config): Promise<void> {
  const runtime = await startRuntime(config, { processMetrics: true });
  const { app } = runtime;
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  if (runtime.bootstrapKey !== undefined) {
    process.stdout.write(
      [
        '',
        'First start: created an API key (shown only this once; keep it safe):',
        '',
        `  ${runtime.bootstrapKey.key}`,
        '',
        `  organization ${runtime.bootstrapKey.record.organizationId}, tier ${runtime.bootstrapKey.record.tier}`,
        `  try: curl ${address}/v1/models -H "Authorization: Bearer ${runtime.bootstrapKey.key}"`,
        '',
        ...(runtime.bootstrapOwnerLink === undefined
          ? []
          : [
              `Dashboard: the owner ${runtime.bootstrapOwnerLink.email} of ${runtime.bootstrapKey.record.organizationId} sets a password here (valid 24 h, once):`,
              '',
              `  ${setPasswordLink(address, runtime.bootstrapOwnerLink.token)}`,
              '',
            ]),
      ].join('\n') + '\n',
    );
  }
  app.log.info({ address, database: config.databaseUrl.split(':')[0], redis: config.redisUrl !== undefined }, 'switchyard listening');

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const deadline = setTimeout(() => {
      app.log.warn('grace period over: closing remaining connections');
      app.server.closeAllConnections();
    }, config.server.shutdownGraceMs);
    deadline.unref();
    runtime.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
