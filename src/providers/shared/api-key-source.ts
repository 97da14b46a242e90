/**
 * An upstream key read from a file (`apiKey: { file }`, config/secret-file.ts) that follows the file:
 * its status is polled once a second (off the request path: no file system call per request) and,
 * when it changed, the file is read again and `onChange` gets the new key, which the provider writes
 * into the headers its models send. A re-read that fails (the file is gone, unreadable or empty) keeps
 * the last good key and is logged once until a read succeeds again.
 *
 * The first status is taken when the watch starts, synchronously, and the file is read once more
 * right after: `fs.watchFile` took its first status later, in the thread pool, and a change written
 * before that status (seen once on a busy test process) was never noticed.
 */
import { statSync, type Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { UpstreamHttpClient } from './http-client.ts';
import type { ProviderLogger } from './provider-context.ts';

/** How often the file's status is polled, milliseconds. */
const POLL_INTERVAL_MS = 1000;

/** The status fields whose change means the file was written or replaced (undefined: it is gone). */
function fingerprint(status: Stats | undefined): string {
  return status === undefined ? '' : `${status.mtimeMs}:${status.size}:${status.ino}`;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

export class ApiKeyFile {
  /** The status last polled. */
  private last: string;
  private readonly timer: NodeJS.Timeout;
  private polling = false;
  /** True while a failed re-read has been logged and no read has succeeded since. */
  private failing = false;

  constructor(
    private readonly path: string,
    /** The key read at start-up (the config load checked the file). */
    private key: string,
    private readonly onChange: (key: string) => void,
    private readonly logger?: ProviderLogger,
  ) {
    this.last = fingerprint(statOrUndefined(path));
    this.timer = setInterval(() => void this.poll(), POLL_INTERVAL_MS);
    this.timer.unref();
    // A change between the start-up read and the first status above is caught here.
    void this.reread();
  }

  /** The last good key. */
  get current(): string {
    return this.key;
  }

  /** Stops following the file. */
  close(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = fingerprint(await stat(this.path).catch(() => undefined));
      if (now === this.last) return;
      this.last = now;
      await this.reread();
    } finally {
      this.polling = false;
    }
  }

  private async reread(): Promise<void> {
    let key: string | undefined;
    let problem: string;
    try {
      // As at start-up (config/secret-file.ts): surrounding white space is no part of the key.
      key = (await readFile(this.path, 'utf8')).trim() || undefined;
      problem = 'it is empty';
    } catch (error) {
      problem = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : `it cannot be read (${String(error)})`;
    }
    if (key === undefined) {
      if (!this.failing)
        this.logger?.warn(
          { file: this.path },
          `The upstream key file could not be read again (${problem}); the last key read stays in use.`,
        );
      this.failing = true;
      return;
    }
    this.failing = false;
    if (key === this.key) return;
    this.key = key;
    this.onChange(key);
  }
}

/**
 * Follows the key file of a provider, when its key came from one: a new key is scrubbed from error
 * messages from then on and handed to `apply` (which writes the provider's auth header).
 */
export function followApiKeyFile(
  config: { apiKeyFile?: string; apiKeyValue?: string },
  client: UpstreamHttpClient,
  logger: ProviderLogger | undefined,
  apply: (key: string) => void,
): ApiKeyFile | undefined {
  if (config.apiKeyFile === undefined || config.apiKeyValue === undefined) return undefined;
  const onChange = (key: string): void => {
    client.addSecret(key);
    apply(key);
  };
  return new ApiKeyFile(config.apiKeyFile, config.apiKeyValue, onChange, logger);
}
