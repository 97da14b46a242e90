/**
 * `switchyard serve`: start the HTTP service, print the bootstrap key once, shut down gracefully on
 * SIGTERM/SIGINT: first drain (`/readyz` answers 503 for `server.drainDelaySeconds` while every other
 * route still serves, so a load balancer takes the instance out of rotation without a failed request),
 * then stop accepting, finish in-flight requests within the grace period and close storage. A second
 * signal during the drain delay skips the rest of it.
 */
import type { Config } from '../config/index.ts';
import { startRuntime } from '../runtime.ts';
import { setPasswordLink } from './owners.ts';

export async function serve(config: Config): Promise<void> {
  const runtime = await startRuntime(config, { processMetrics: true, waitForDatabase: true });
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

  if (
    config.server.publicBaseUrl === undefined &&
    config.server.trustProxy === false &&
    !/^(127\.|::1$|localhost$)/.test(config.server.host)
  ) {
    app.log.warn(
      'neither publicBaseUrl (PUBLIC_BASE_URL) nor trustProxy (TRUST_PROXY) is set: signed links use the address each request arrived at',
    );
  }

  let draining: NodeJS.Timeout | undefined;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    if (draining !== undefined) {
      clearTimeout(draining);
      draining = undefined;
      return close(signal);
    }
    const delayMs = config.server.drainDelaySeconds * 1000;
    if (delayMs === 0) return close(signal);
    runtime.startDraining();
    app.log.info({ signal, drainDelaySeconds: config.server.drainDelaySeconds }, 'draining: /readyz answers 503, still serving');
    draining = setTimeout(() => {
      draining = undefined;
      close(signal);
    }, delayMs);
  };
  const close = (signal: string): void => {
    stopping = true;
    runtime.startDraining();
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
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
