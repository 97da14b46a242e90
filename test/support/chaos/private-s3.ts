/**
 * s3rver as a child process (test/support/s3-server-main.ts) on a fixed port over a fixed directory,
 * so that a chaos test can SIGKILL the object store and start it again where it was, objects kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { S3_TEST_CREDENTIALS } from '../s3-server.ts';
import { TYPESCRIPT_LOADER } from '../typescript-loader.ts';

export class PrivateS3 {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly directory: string,
    readonly bucket: string,
  ) {}

  static async create(bucket = 'chaos'): Promise<PrivateS3> {
    const s3 = new PrivateS3(await freePort(), mkdtempSync(join(tmpdir(), 'switchyard-chaos-s3-')), bucket);
    await s3.start();
    return s3;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The environment a Switchyard process needs to keep its files under s3://<bucket>/files. */
  env(): Record<string, string> {
    return {
      FILES_STORE: `s3://${this.bucket}/files`,
      AWS_ENDPOINT_URL: this.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    };
  }

  /** Starts s3rver; resolves once it prints its endpoint. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, 'test/support/s3-server-main.ts', this.bucket], {
      env: { PATH: process.env['PATH'], S3_PORT: String(this.port), S3_DIRECTORY: this.directory },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('s3 endpoint')) resolve();
      });
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}: ${output}`)));
    });
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.directory, { recursive: true, force: true });
  }

  closeSync(): void {
    this.child?.kill('SIGKILL');
  }
}
