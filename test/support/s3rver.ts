import { mkdtemp, rm, unlink, utimes } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The part of s3rver (untyped, CommonJS) these tests use. */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

/**
 * s3rver 3.7.1 makes ListObjectsV2 continuation tokens with single DES
 * (`des`), which OpenSSL 3 keeps in its legacy provider: on this Node every
 * listing that is cut short (more keys than max-keys) answers 500. Triple
 * DES with the key repeated three times is the same cipher, byte for byte,
 * and is in the default provider, so the test server gets that instead.
 */
function letS3rverPageListings(): void {
  const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const marked = crypto as unknown as { s3rverDesPatched?: boolean };
  if (marked.s3rverDesPatched) return;
  marked.s3rverDesPatched = true;
  const swap = (args: unknown[]): unknown[] => {
    const [algorithm, key] = args;
    return algorithm === 'des' && Buffer.isBuffer(key) && key.length === 8 ? ['des-ede3-cbc', Buffer.concat([key, key, key]), ...args.slice(2)] : args;
  };
  const cipher = crypto.createCipheriv as (...args: unknown[]) => unknown;
  const decipher = crypto.createDecipheriv as (...args: unknown[]) => unknown;
  crypto.createCipheriv = ((...args: unknown[]) => cipher(...swap(args))) as typeof crypto.createCipheriv;
  crypto.createDecipheriv = ((...args: unknown[]) => decipher(...swap(args))) as typeof crypto.createDecipheriv;
}
letS3rverPageListings();

/**
 * s3rver 3.7.1 race (machine notes): its filesystem store's deleteObject
 * removes "directories" that became empty while a concurrent putObject under
 * the same prefix is opening its file there; the put then fails with ENOENT
 * unhandled and the whole s3rver process dies, which no real S3 or MinIO
 * would do. The test server deletes an object's three files and leaves the
 * directories alone.
 */
function keepS3rverDirectories(): void {
  const require = createRequire(import.meta.url);
  const store = require('s3rver/lib/stores/filesystem') as {
    prototype: { deleteObject(bucket: string, key: string): Promise<void>; getResourcePath(bucket: string, key: string, resource: string): string };
    s3rverDirectoriesKept?: boolean;
  };
  if (store.s3rverDirectoriesKept) return;
  store.s3rverDirectoriesKept = true;
  store.prototype.deleteObject = async function deleteObject(bucket: string, key: string): Promise<void> {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(this.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        }),
      ),
    );
  };
}
keepS3rverDirectories();

/** s3rver's built-in account; it accepts no other credentials. */
export const S3RVER_ACCESS_KEY = 'S3RVER';
export const S3RVER_SECRET_KEY = 'S3RVER';

/**
 * An S3 server on a free port of 127.0.0.1 with its objects in a temp dir.
 * stop() and start() again keep the port and the data, so a test can take
 * the server away and bring it back.
 */
export class TestS3Server {
  private server: S3rverInstance | null = null;
  private port = 0;

  private constructor(private readonly directory: string) {}

  static async start(): Promise<TestS3Server> {
    const s3 = new TestS3Server(await mkdtemp(path.join(os.tmpdir(), 's3rver-')));
    await s3.start();
    return s3;
  }

  get endPoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts (again, on the same port and data); a no-op while it runs. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = new S3rver({ address: '127.0.0.1', port: this.port, directory: this.directory, silent: true });
    const address = await server.run();
    this.port = address.port;
    this.server = server;
  }

  /** Closes the listener and drops open keep-alive sockets, like a crashed server. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = server.close();
    server.httpServer?.closeAllConnections();
    await closed;
  }

  /**
   * Makes an object look written at `when`: s3rver answers an object's
   * LastModified from the modification time of the file that holds it.
   */
  async backdate(bucket: string, key: string, when: Date): Promise<void> {
    const segments = key.split('/');
    const name = segments.pop()!;
    await utimes(path.join(this.directory, bucket, ...segments, `${name}._S3rver_object`), when, when);
  }

  /** Stops the server and removes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.directory, { recursive: true, force: true });
  }
}
