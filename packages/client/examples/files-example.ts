// packages/client/examples/files-example.ts (compiled by the tests)
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createClient } from '@logi/client';

const api = createClient({ baseUrl: 'http://127.0.0.1:3000/v1', token: 'demo-key-baltic', clientDirectory: 'baltic-haulage' });
const [first] = await api.files.list(3001); // oldest first: name, size, content_type, sha256
if (first) {
  // Streamed to disk, never held whole in memory; the name is the one the uploader gave.
  const file = await api.files.download(3001, first.id);
  await pipeline(Readable.fromWeb(file.body), createWriteStream(file.fileName));
  // Resume from the first MiB: `range` is null when the file changed since (then it came whole).
  const rest = await api.files.download(3001, first.id, { range: { start: 1_048_576 }, ifRange: file.etag ?? undefined });
  console.log(rest.range, rest.length);
  await rest.body.cancel();
  // A URL for someone without an API key, working for an hour.
  const { url, expires } = await api.files.link(3001, first.id, { ttl: 3600 });
  console.log(url, new Date(expires * 1000));
}
