// Runs the s3rver test server as its own process (benchmarks: its memory is not the client's).
// Prints `s3 endpoint <url>` once listening; buckets are named by the arguments. Stops on SIGTERM.
import { startS3Server } from './s3-server.ts';

const server = await startS3Server(process.argv.slice(2));
process.stdout.write(`s3 endpoint ${server.endpoint}\n`);
process.once('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
