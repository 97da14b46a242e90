/**
 * A private PostgreSQL for chaos tests: `initdb` into a temporary directory, `pg_ctl` on a free port,
 * listening on 127.0.0.1 only, trust authentication, its socket in the same temporary directory. Never
 * the shared server on 5432. Postgres refuses to run as root, so as root (CI) the directory belongs to
 * the `postgres` OS user and every binary runs through `runuser -u postgres --`.
 *
 * Faults: `stop()` (`pg_ctl stop -m fast`, what a restart or a failover does to clients), `start()`,
 * `freeze()` / `thaw()` (SIGSTOP / SIGCONT of the postmaster and every backend).
 */
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../free-port.ts';
import { freeze, hasBinary, thaw } from './process-tree.ts';

const run = promisify(execFile);

/** Whether this machine can run a private Postgres (initdb, pg_ctl and postgres on PATH). */
export const canRunPrivatePostgres = hasBinary('initdb') && hasBinary('pg_ctl') && hasBinary('postgres');

const asRoot = process.getuid?.() === 0;

/** `[command, ...args]`, through `runuser -u postgres --` when this process is root. */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function postgresUser(): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('running as root, but there is no `postgres` OS user to run Postgres as');
  return { uid, gid };
}

export class PrivatePostgres {
  private frozen: number[] = [];
  private running = false;

  private constructor(
    readonly port: number,
    private readonly directory: string,
  ) {}

  /** Creates the cluster and a `switchyard` database, and starts the server. */
  static async create(): Promise<PrivatePostgres> {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-chaos-pg-'));
    const server = new PrivatePostgres(await freePort(), directory);
    try {
      mkdirSync(server.dataDirectory);
      mkdirSync(server.socketDirectory);
      if (asRoot) {
        const { uid, gid } = postgresUser();
        for (const path of [directory, server.dataDirectory, server.socketDirectory]) chownSync(path, uid, gid);
      }
      await server.pg('initdb', ['-D', server.dataDirectory, '-U', 'postgres', '--auth=trust', '--no-instructions', '-E', 'UTF8']);
      await server.start();
      const admin = new pg.Client({ connectionString: server.adminUrl });
      await admin.connect();
      try {
        await admin.query('CREATE DATABASE switchyard');
      } finally {
        await admin.end();
      }
      return server;
    } catch (error) {
      await server.close();
      throw error;
    }
  }

  get dataDirectory(): string {
    return join(this.directory, 'data');
  }

  private get socketDirectory(): string {
    return join(this.directory, 'socket');
  }

  private get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** The `switchyard` database, for DATABASE_URL. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/switchyard`;
  }

  /** The server's log so far (pg_ctl's `-l` file). */
  log(): string {
    try {
      return readFileSync(join(this.directory, 'postgres.log'), 'utf8');
    } catch {
      return '';
    }
  }

  private async pg(command: string, args: string[]): Promise<void> {
    const [binary, argv] = asPostgres(command, args);
    await run(binary, argv, { cwd: this.directory });
  }

  /** `pg_ctl start -w`: resolves once the server accepts connections. */
  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.socketDirectory}`,
      '-c listen_addresses=127.0.0.1',
      // A test cluster: durability is not under test, speed is.
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
    ].join(' ');
    await this.pg('pg_ctl', [
      '-D',
      this.dataDirectory,
      '-l',
      join(this.directory, 'postgres.log'),
      '-o',
      options,
      '-w',
      '-t',
      '30',
      'start',
    ]);
    this.running = true;
  }

  /** `pg_ctl stop -m fast`: every connection is terminated, as in a restart or failover. */
  async stop(): Promise<void> {
    this.thaw();
    await this.pg('pg_ctl', ['-D', this.dataDirectory, '-m', 'fast', '-w', 'stop']);
    this.running = false;
  }

  /** The postmaster's pid (first line of postmaster.pid). */
  private postmasterPid(): number {
    return Number(readFileSync(join(this.dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** SIGSTOPs the postmaster and every backend: connections stay open and nothing answers. */
  freeze(): void {
    this.frozen = freeze(this.postmasterPid());
  }

  thaw(): void {
    thaw(this.frozen);
    this.frozen = [];
  }

  /** Thaws, stops (`immediate`) and removes everything; safe to call twice and after a failed start. */
  async close(): Promise<void> {
    this.thaw();
    if (this.running) {
      await this.pg('pg_ctl', ['-D', this.dataDirectory, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      this.running = false;
    }
    rmSync(this.directory, { recursive: true, force: true });
  }

  /**
   * For a process `exit` handler (no promises there): thaws and stops the server synchronously. The
   * directory is left for the operating system's temporary-file clean-up.
   */
  closeSync(): void {
    this.thaw();
    if (!this.running) return;
    const [binary, argv] = asPostgres('pg_ctl', ['-D', this.dataDirectory, '-m', 'immediate', '-w', 'stop']);
    spawnSync(binary, argv, { cwd: this.directory, stdio: 'ignore' });
    this.running = false;
  }
}
