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
type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

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

  /** Writes through the child, which is built on the first line at an enabled level. */
  private write(level: LogLevel, args: Parameters<LogFunction>): void {
    if (this.enabled(level)) this.logger[level](...args);
  }

  private enabled(level: LogLevel): boolean {
    if (this.created !== undefined) return true;
    const parent = this.parent as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
    return parent.isLevelEnabled?.(level) ?? true;
  }

  // Methods on the prototype, not per-instance closures: one of these is made for every request.
  fatal(...args: Parameters<LogFunction>): void {
    this.write('fatal', args);
  }
  error(...args: Parameters<LogFunction>): void {
    this.write('error', args);
  }
  warn(...args: Parameters<LogFunction>): void {
    this.write('warn', args);
  }
  info(...args: Parameters<LogFunction>): void {
    this.write('info', args);
  }
  debug(...args: Parameters<LogFunction>): void {
    this.write('debug', args);
  }
  trace(...args: Parameters<LogFunction>): void {
    this.write('trace', args);
  }
  silent(): void {
    // Nothing: the silent level writes nothing.
  }

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
