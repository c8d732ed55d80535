import { openAsBlob } from 'node:fs';
import path from 'node:path';

/**
 * One file to upload: a path on disk (named after its base name), or bytes
 * with a name. Buffers, Uint8Arrays and Blobs are sent as they are, a file
 * path is streamed from disk; a stream is read into memory first (a file is at
 * most 10 MiB), because a part of fetch's FormData is a Blob.
 */
export type UploadSource =
  string | { path: string; name?: string } | { name: string; content: Uint8Array | Blob | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> };

export async function toFile(source: UploadSource): Promise<File> {
  if (typeof source === 'string') return toFile({ path: source });
  if ('path' in source) return new File([await openAsBlob(source.path)], source.name ?? path.basename(source.path));
  const { name, content } = source;
  if (content instanceof Blob) return new File([content], name, { type: content.type });
  if (content instanceof Uint8Array) return new File([blobPart(content)], name);
  const chunks: BlobPart[] = [];
  for await (const chunk of content as AsyncIterable<Uint8Array>) chunks.push(blobPart(chunk));
  return new File(chunks, name);
}

/** A part of a File, named without the DOM library's global type (Node's and the DOM's differ). */
type BlobPart = ConstructorParameters<typeof File>[0][number];

/** A Blob copies the bytes it is given, so a view of any buffer (a shared one too) will do. */
function blobPart(bytes: Uint8Array): BlobPart {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed under a client's own tsc --strict and newer lib typings (sdk-examples.test.ts), not under this repository's
  return bytes as Uint8Array<ArrayBuffer>;
}
