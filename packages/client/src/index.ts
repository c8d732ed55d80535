export {
  createClient,
  type ClientOptions,
  type DownloadTarget,
  type FileDownloadOptions,
  type FileLinkOptions,
  type IdempotencyOptions,
  type LogiClient,
  type UploadOptions,
  type WaitExportOptions,
} from './logi.client.js';
export { ApiError, EventsExpiredError, ExportFailedError, type FieldErrors } from './api.errors.js';
export { EventStream, type FollowEventsOptions } from './event-stream.js';
export { verifyWebhook, type WebhookHeaders } from './verify-webhook.js';
export { WebhookVerificationError } from './webhook-verification.errors.js';
export type { RetryOptions, RetryEvent } from './retrying.fetch.js';
export type { DownloadedFile, StreamedFile } from './downloaded-file.js';
export type { UploadSource } from './upload-source.js';
export type * from './schema.types.js';
export type { paths, components, operations } from './generated/openapi.js';
