export { createClient, type ClientOptions, type LogiClient, type UploadOptions } from './logi.client.js';
export { ApiError, type FieldErrors } from './api.errors.js';
export type { RetryOptions, RetryEvent } from './retrying.fetch.js';
export type { DownloadedFile } from './downloaded-file.js';
export type { UploadSource } from './upload-source.js';
export type * from './schema.types.js';
export type { paths, components, operations } from './generated/openapi.js';
