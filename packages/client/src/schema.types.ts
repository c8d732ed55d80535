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

/** Every filter, sort and page parameter of GET /invoices; lists are arrays (`statuses: ['overdue', 'paid']`). */
export type ListInvoicesQuery = NonNullable<operations['listInvoices']['parameters']['query']>;
/** `lang` and `duplicate` of a PDF download. */
export type InvoicePdfOptions = NonNullable<operations['downloadInvoicePdf']['parameters']['query']>;
/** `format` (`ubl`, the default, or `cii`) and `lang` (the language of the texts inside). */
export type EInvoiceOptions = NonNullable<operations['downloadEInvoice']['parameters']['query']>;
