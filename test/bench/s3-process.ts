/**
 * The benchmark's S3 server (s3rver) in a process of its own: prints
 * `{"endPoint": ...}` once listening, and stops and removes its data when its
 * stdin closes (the benchmark stopped it, or died).
 */
import { unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { TestS3Server } from '../support/s3rver.js';

/**
 * s3rver 3.7.1 removes "directories" that became empty after a delete, while a
 * concurrent put under the same prefix may be opening its file there; the put
 * then dies with ENOENT and takes the server down (machine-notes.md). Deletes
 * here unlink the object's files and leave directories alone.
 */
function patchS3rverDeletes(): void {
  const store = createRequire(import.meta.url)('s3rver/lib/stores/filesystem') as {
    prototype: { deleteObject(bucket: string, key: string): Promise<void>; getResourcePath(bucket: string, key: string, resource: string): string };
  };
  store.prototype.deleteObject = async function deleteObject(bucket: string, key: string) {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(this.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        }),
      ),
    );
  };
}

patchS3rverDeletes();
const server = await TestS3Server.start();
process.stdout.write(`${JSON.stringify({ endPoint: server.endPoint })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void server.destroy().finally(() => process.exit(0));
});
