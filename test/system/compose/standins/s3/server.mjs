// s3rver as the Versity S3 Gateway is configured in docker-compose.yml: objects under
// VGW_BACKEND_ARG, listening on VGW_PORT (":7070"), the root key pair from ROOT_ACCESS_KEY and
// ROOT_SECRET_KEY, and 200 on VGW_HEALTH. Two fixes the tests' s3rver has too
// (test/support/s3rver.ts): continuation tokens with triple DES (OpenSSL 3 has no single DES),
// and deleteObject leaving directories alone (s3rver's removal of empty ones races a put).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import S3rver from 's3rver';
import account from 's3rver/lib/models/account.js';
import FilesystemStore from 's3rver/lib/stores/filesystem.js';

const swap = (args) => {
  const [algorithm, key] = args;
  return algorithm === 'des' && Buffer.isBuffer(key) && key.length === 8 ? ['des-ede3-cbc', Buffer.concat([key, key, key]), ...args.slice(2)] : args;
};
const cipher = crypto.createCipheriv;
const decipher = crypto.createDecipheriv;
crypto.createCipheriv = (...args) => cipher(...swap(args));
crypto.createDecipheriv = (...args) => decipher(...swap(args));

FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
  await Promise.all(
    ['object', 'object.md5', 'metadata.json'].map((resource) =>
      fs.unlink(this.getResourcePath(bucket, key, resource)).catch((error) => {
        if (error.code !== 'ENOENT') throw error;
      }),
    ),
  );
};

const { ROOT_ACCESS_KEY, ROOT_SECRET_KEY } = process.env;
if (!ROOT_ACCESS_KEY || !ROOT_SECRET_KEY) {
  console.error('ROOT_ACCESS_KEY and ROOT_SECRET_KEY are required');
  process.exit(1);
}
account.DUMMY_ACCOUNT.createKeyPair(ROOT_ACCESS_KEY, ROOT_SECRET_KEY);

const [host, port] = (process.env.VGW_PORT || ':7070').split(':');
const health = process.env.VGW_HEALTH || '/_health';
// Path-style only, as the gateway: s3rver would otherwise take the host name (`s3`) for a bucket.
const server = new S3rver({
  address: host || '0.0.0.0',
  port: Number(port),
  directory: process.env.VGW_BACKEND_ARG || '/data',
  vhostBuckets: false,
  silent: true,
});
server.middleware.unshift(async (ctx, next) => {
  if (ctx.path !== health) return next();
  ctx.body = 'OK';
});
server.run().then(
  (address) => console.log(`s3rver listening on ${address.address}:${address.port}`),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close().finally(() => process.exit(0)));
