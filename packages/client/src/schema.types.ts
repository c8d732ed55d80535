import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];

export type Invoice = Schemas['Invoice'];
export type InvoiceList = Schemas['InvoiceList'];
export type Pagination = Schemas['Pagination'];
export type OrderLookup = Schemas['OrderLookup'];
export type FileCategory = Schemas['FileCategory'];
export type UploadedFile = Schemas['UploadedFile'];
export type FailedUpload = Schemas['FailedUpload'];
export type AttachFilesPayload = Schemas['AttachFilesPayload'];
/** A file of an order: name, category, size, sniffed content type, SHA-256 (hex) and when it was attached. */
export type OrderFile = Schemas['OrderFile'];
/** A URL that serves the file without credentials until `expires` (Unix seconds). */
export type FileLink = Schemas['FileLink'];

/** Every filter, sort and page parameter of GET /invoices; lists are arrays (`statuses: ['overdue', 'paid']`). */
export type ListInvoicesQuery = NonNullable<operations['listInvoices']['parameters']['query']>;
/** `lang` and `duplicate` of a PDF download. */
export type InvoicePdfOptions = NonNullable<operations['downloadInvoicePdf']['parameters']['query']>;
/** `format` (`ubl`, the default, or `cii`) and `lang` (the language of the texts inside). */
export type EInvoiceOptions = NonNullable<operations['downloadEInvoice']['parameters']['query']>;

/** One change, as the feed and webhooks carry it: narrow on `type` to reach `data.object` (and `previous_attributes` of `invoice.updated`). */
export type Event = Schemas['Event'];
export type EventType = Event['type'];
export type InvoiceCreatedEvent = Schemas['InvoiceCreatedEvent'];
export type InvoiceUpdatedEvent = Schemas['InvoiceUpdatedEvent'];
export type InvoiceDeletedEvent = Schemas['InvoiceDeletedEvent'];
export type FileAttachedEvent = Schemas['FileAttachedEvent'];
/** `events` oldest first, `has_more`, and `next_after` (the `after` of the next request). */
export type EventPage = Schemas['EventPage'];
/** `after`, `limit`, `types` (an array) and `wait` (long poll, seconds) of GET /events. */
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;

export type WebhookEndpoint = Schemas['WebhookEndpoint'];
/** A new endpoint with its signing `secret`, shown only on creation (and rotation). */
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** Attempts newest first; `next_after` is the `after` of the next (older) page. */
export type WebhookDeliveryPage = Schemas['WebhookDeliveryPage'];
export type CreateWebhookEndpointBody = NonNullable<operations['createWebhookEndpoint']['requestBody']>['content']['application/json'];
/** Any of `url`, `event_types`, `description`, `enabled`; what is not sent stays. */
export type UpdateWebhookEndpointBody = NonNullable<operations['updateWebhookEndpoint']['requestBody']>['content']['application/json'];
export type ListWebhookDeliveriesQuery = NonNullable<operations['listWebhookDeliveries']['parameters']['query']>;
/** The new signing secret; the old one also signs for 24 hours. */
export type WebhookSecret = Schemas['WebhookSecretEnvelope']['data'];
/** `after`: send again every kept event past this event id. */
export type ReplayWebhookEventsBody = NonNullable<operations['replayWebhookEvents']['requestBody']>['content']['application/json'];
/** How many events were scheduled to be sent again. */
export type ReplayResult = Schemas['ReplayEnvelope']['data'];

/** An export: `status`, progress (`done` of `total`), `events_cursor`, and once succeeded the archive's `size`, `sha256`, `expires`. */
export type Export = Schemas['Export'];
export type ExportSucceededEvent = Schemas['ExportSucceededEvent'];
export type ExportFailedEvent = Schemas['ExportFailedEvent'];
/** `filters` (the list's parameters, as strings), `documents`, `lang`, `duplicate`, `csv`; every member optional. */
export type CreateExportBody = NonNullable<operations['createExport']['requestBody']>['content']['application/json'];
