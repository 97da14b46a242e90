/**
 * The per-request logger, built on first use. Fastify gives every request a pino child carrying its
 * request id; building one (bindings, redaction setup) cost about 2% of a chat completion's CPU in
 * profiles, and at the default level almost no request ever logs. This stands in for the child and
 * creates it only when a line is actually written at an enabled level.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

type LogFunction = FastifyBaseLogger['info'];
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

class LazyRequestLogger {
  private created: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.created ??= this.parent.child(this.bindings, this.options);
    return this.created;
  }

  get level(): string {
    return this.created?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private enabled(level: string): boolean {
    if (this.created !== undefined) return true;
    const parent = this.parent as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
    return parent.isLevelEnabled?.(level) ?? true;
  }

  readonly fatal: LogFunction = (...args: Parameters<LogFunction>) => {
    if (this.enabled('fatal')) this.logger.fatal(...args);
  };
  readonly error: LogFunction = (...args: Parameters<LogFunction>) => {
    if (this.enabled('error')) this.logger.error(...args);
  };
  readonly warn: LogFunction = (...args: Parameters<LogFunction>) => {
    if (this.enabled('warn')) this.logger.warn(...args);
  };
  readonly info: LogFunction = (...args: Parameters<LogFunction>) => {
    if (this.enabled('info')) this.logger.info(...args);
  };
  readonly debug: LogFunction = (...args: Parameters<LogFunction>) => {
    if (this.enabled('debug')) this.logger.debug(...args);
  };
  readonly trace: LogFunction = (...args: Parameters<LogFunction>) => {
    if (this.enabled('trace')) this.logger.trace(...args);
  };
  readonly silent: LogFunction = () => undefined;

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a request logger that becomes a pino child on its first enabled line. */
export function lazyRequestLoggerFactory(
  this: FastifyInstance,
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
