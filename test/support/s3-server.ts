/**
 * A real S3 wire server for tests and benchmarks: s3rver (S3's REST API, including multipart uploads,
 * over HTTP, objects kept in a temporary directory). Tests can run it in-process; `s3-server-main.ts`
 * runs it as a child process that prints its endpoint.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** s3rver accepts these fixed credentials (it checks the signature against them). */
export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface S3TestServer {
  endpoint: string;
  /** The environment a Switchyard process needs to use `bucket` on this server. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/**
 * @param options.port Listen there (default: a free port). @param options.directory Keep the objects
 * there and leave it on close (default: a temporary directory removed on close). Both let a chaos test
 * kill the server and start it again on the same port over the same objects.
 */
export async function startS3Server(
  buckets: string[],
  options: { port?: number | undefined; directory?: string | undefined } = {},
): Promise<S3TestServer> {
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'switchyard-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    env: () => ({
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    }),
    async close() {
      await server.close();
      if (options.directory === undefined) rmSync(directory, { recursive: true, force: true });
    },
  };
}
