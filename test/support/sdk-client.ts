import type { Knex } from 'knex';
import type { Container } from 'inversify';
import { Tokens } from '@logi/api';
import { createClient, type ClientOptions, type LogiClient } from '@logi/client';
import type { FileStoragePort, StreamedWrite, StreamedWriteEnd } from '@logi/domain';
import type { ProductionStack } from './production-stack.js';
import { DIRS, KEYS } from './test-fixture.js';
import type { Tenant, TestApi } from './api-harness.js';

/** The SDK pointed at a test server as one of the fixture's clients; `urls` collects every URL it requested. */
export function sdkFor(api: TestApi, tenant: Tenant, options: Partial<ClientOptions> = {}): LogiClient & { urls: string[] } {
  const urls: string[] = [];
  const recordingFetch: typeof fetch = (input, init) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return fetch(input, init);
  };
  return Object.assign(createClient({ baseUrl: api.base, token: KEYS[tenant], clientDirectory: DIRS[tenant], fetch: recordingFetch, ...options }), { urls });
}

export const REFUSED_CONTENT_TYPE = 'image/png';
export const REFUSED_MESSAGE = 'Storage refuses PNG files on this test server';

/**
 * For `beforeStart`: the API's storage refuses PNG files (content type sniffed
 * from the bytes) and keeps everything else, so one upload can store some files
 * and fail others, in either profile (the API process stages every file).
 */
export async function refusePngFiles(_dataDir: string, { container }: { knex: Knex; stack: ProductionStack | null; container: Container }): Promise<void> {
  const storage = container.get<FileStoragePort>(Tokens.FileStorage);
  const refusing: FileStoragePort = Object.create(storage, {
    putFile: {
      value: (key: string, localPath: string, size: number, contentType: string) =>
        contentType === REFUSED_CONTENT_TYPE ? Promise.reject(new Error(REFUSED_MESSAGE)) : storage.putFile(key, localPath, size, contentType),
    },
    // On S3 the API writes a file while it arrives (ADR 0056): refused once its type is known, at the end.
    ...(storage.beginWrite
      ? {
          beginWrite: {
            value: (key: string, contentType: Promise<string>) => {
              const write = storage.beginWrite!(key, contentType);
              const refusing: StreamedWrite = {
                write: (chunk) => write.write(chunk),
                end: async (info: StreamedWriteEnd) => {
                  if (info.contentType !== REFUSED_CONTENT_TYPE) return write.end(info);
                  await write.abort();
                  throw new Error(REFUSED_MESSAGE);
                },
                abort: () => write.abort(),
              };
              return refusing;
            },
          },
        }
      : {}),
  });
  container.unbind(Tokens.FileStorage);
  container.bind(Tokens.FileStorage).toConstantValue(refusing);
}
