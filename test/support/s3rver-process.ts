/**
 * Runs the test S3 server in a process of its own (see ChildS3Server): prints
 * `{"endPoint": ...}` once listening, and stops and removes its data when
 * its stdin closes (the parent stopped it, or died).
 */
import { TestS3Server } from './s3rver.js';

const server = await TestS3Server.start();
process.stdout.write(`${JSON.stringify({ endPoint: server.endPoint })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void server.destroy().finally(() => process.exit(0));
});
