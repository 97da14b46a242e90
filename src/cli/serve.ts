/**
 * `switchyard serve`: start the HTTP service, print the bootstrap key once, shut down gracefully on
 * SIGTERM/SIGINT: first drain (`/readyz` answers 503 for `server.drainDelaySeconds` while every other
 * route still serves, so a load balancer takes the instance out of rotation without a failed request),
 * then stop accepting, finish in-flight requests within the grace period and close storage. A second
 * signal to this process during the drain delay skips the rest of it (a signal relayed by `npm start`'s
 * wrapper is the same stop, never a second one). Nothing shown once is created before the listener is up,
 * and a known start-up failure is one sentence (startup-failure.ts).
 */
import type { Config } from '../config/index.ts';
import { startRuntime, type FirstStartSecrets, type Runtime } from '../runtime.ts';
import { setPasswordLink } from './owners.ts';
import { startupStep } from './startup-failure.ts';

/** Prints what the first start created: the key with a curl line, and the owner's set-password link. */
function printFirstStartSecrets(secrets: FirstStartSecrets, baseUrl: string): void {
  const { key, ownerLink } = secrets;
  process.stdout.write(
    [
      '',
      'First start: created an API key (shown only this once; keep it safe):',
      '',
      `  ${key.key}`,
      '',
      `  organization ${key.record.organizationId}, tier ${key.record.tier}`,
      `  try: curl ${baseUrl.replace(/\/+$/, '')}/v1/models -H "Authorization: Bearer ${key.key}"`,
      '',
      ...(ownerLink === undefined
        ? []
        : [
            `Dashboard: the owner ${ownerLink.email} of ${key.record.organizationId} sets a password here (valid 24 h, once):`,
            '',
            `  ${setPasswordLink(baseUrl, ownerLink.token)}`,
            '',
          ]),
    ].join('\n') + '\n',
  );
}

export async function serve(config: Config): Promise<void> {
  const runtime = await startupStep('storage', config, () => startRuntime(config, { processMetrics: true, waitForDatabase: true }));
  const { app } = runtime;
  // Before the listener opens: a stop that arrives while the first start finishes is a stop, not a kill.
  handleStops(runtime, config);
  let address: string;
  try {
    address = await startupStep('listen', config, () => app.listen({ host: config.server.host, port: config.server.port }));
    const { operations } = runtime;
    if (operations !== undefined) {
      const { host, operationsHost, operationsPort } = config.server;
      const operationsAddress = await startupStep('operations-listen', config, () =>
        operations.listen({ host: operationsHost ?? host, port: operationsPort ?? 0 }),
      );
      app.log.info({ address: operationsAddress }, 'operations listener (/metrics, /readyz, /healthz) listening');
    }
  } catch (error) {
    await runtime.close().catch(() => undefined);
    throw error;
  }
  // Only now, with the listener up, is anything created that is shown once (a failed start loses nothing).
  const secrets = await runtime.createFirstStartSecrets();
  if (secrets !== undefined) printFirstStartSecrets(secrets, config.server.publicBaseUrl ?? address);
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
}

/** SIGTERM/SIGINT and the wrapper's stop messages: drain, then close (see the file comment). */
function handleStops(runtime: Runtime, config: Config): void {
  const { app } = runtime;
  let draining: NodeJS.Timeout | undefined;
  let stopping = false;
  /** Signals this process received itself: a second one skips the rest of the drain delay. */
  let signalsReceived = 0;
  /**
   * One stop, whoever asks: the process's own signal, or `npm start`'s wrapper (scripts/start.mjs)
   * saying it was signalled. Under a supervisor that signals the whole group (systemd's default,
   * Ctrl-C) both arrive for the same stop, so only a second signal to this process itself skips the
   * drain; the wrapper's messages never do.
   */
  const stop = (signal: string, fromWrapper: boolean): void => {
    if (!fromWrapper) signalsReceived += 1;
    if (stopping) return;
    if (draining !== undefined) {
      if (fromWrapper || signalsReceived < 2) return;
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
  process.on('SIGTERM', () => stop('SIGTERM', false));
  process.on('SIGINT', () => stop('SIGINT', false));
  listenToWrapper((signal) => stop(signal, true));
}

/**
 * Under `npm start`, scripts/start.mjs runs this process with an IPC channel and sends
 * `{ type: 'switchyard:stop', signal }` when it is signalled; if the wrapper dies (SIGKILL), the
 * channel closes and this process stops as well rather than live on as an orphan.
 */
function listenToWrapper(onStop: (signal: string) => void): void {
  if (process.env['SWITCHYARD_WRAPPER'] !== 'start.mjs' || process.channel === undefined) return;
  process.channel.unref();
  process.on('message', (message: unknown) => {
    if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== 'switchyard:stop') return;
    const signal = (message as { signal?: unknown }).signal;
    onStop(typeof signal === 'string' ? signal : 'SIGTERM');
  });
  process.once('disconnect', () => onStop('wrapper-exit'));
  process.send?.({ type: 'switchyard:stop-handlers-ready' });
}
