// Runs the s3rver test server as its own process (benchmarks: its memory is not the client's).
// Prints `s3 endpoint <url>` once listening; buckets are named by the arguments. Stops on SIGTERM.
// S3_PORT and S3_DIRECTORY fix the port and the objects' directory (kept on exit), so that a chaos test
// can kill it and start it again where it was.
import { startS3Server } from './s3-server.ts';

const port = process.env['S3_PORT'];
const server = await startS3Server(process.argv.slice(2), {
  port: port === undefined ? undefined : Number(port),
  directory: process.env['S3_DIRECTORY'],
});
process.stdout.write(`s3 endpoint ${server.endpoint}\n`);
process.once('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
