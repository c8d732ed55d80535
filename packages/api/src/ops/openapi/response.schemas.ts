import { z } from 'zod';
import { INVOICE_STATUSES, INVOICE_TYPES } from '@logi/domain';
import type { toAttachFilesDto } from '../../mappers/attach-files.mapper.js';
import type { toInvoiceDto, toInvoiceListDto } from '../../mappers/invoice.mapper.js';
import type { toFileCategoryDto, toOrderFileDto, toOrderLookupDto } from '../../mappers/order.mapper.js';

/**
 * The response bodies as zod schemas, mirroring packages/api/src/mappers
 * field for field. The checks at the bottom make the compiler refuse any
 * drift between a mapper and its schema; strict objects make the API tests
 * refuse a field the document does not know.
 */

const timestamp = (description: string) => z.int().nonnegative().describe(`${description} Unix seconds, UTC.`);

export const invoiceOrderSchema = z
  .strictObject({
    type: z.string().describe('Order type.'),
    nr: z.string().describe('Order number.'),
    cmr: z.string().describe('CMR consignment note number.'),
    tasks: z.array(z.unknown()).describe('Transport tasks, as recorded.'),
    files: z.array(z.unknown()).describe('Files, as recorded.'),
    contacts: z.array(z.unknown()).describe('Contacts, as recorded.'),
  })
  .describe('An order related to an invoice.');

export const invoiceSchema = z
  .strictObject({
    id: z.int().describe('Invoice ID.'),
    nr: z.string().describe('Invoice number.'),
    type: z.enum(INVOICE_TYPES).describe('s = sales, c = correcting, p = purchase.'),
    status: z.enum(INVOICE_STATUSES),
    branch_id: z.int(),
    issue_date: timestamp('Issue date (00:00 of the day in APP_TIMEZONE),'),
    service_date: timestamp('Service date,'),
    payment_term: timestamp('Payment due date,'),
    payment_date: timestamp('Payment date,').nullable().describe('Payment date, Unix seconds, UTC; null while unpaid.'),
    customer_name: z.string(),
    customer_vat: z.string().describe('Customer VAT number.'),
    customer_country: z.string().describe('Two-letter country code, lower case.'),
    currency: z.string().describe('ISO 4217 currency code.'),
    amount_net: z.number(),
    amount_tax: z.number(),
    amount_gross: z.number(),
    paid: z.number().describe('Amount already paid.'),
    left_to_pay: z.number().describe('Amount still to be paid.'),
    orders: z.array(invoiceOrderSchema),
    correct_of: z.strictObject({ id: z.int(), nr: z.string() }).nullable().describe('For a correcting invoice, the invoice it corrects; null otherwise.'),
    added_time: timestamp('Creation time,'),
  })
  .describe('An invoice as listed.');

export const paginationSchema = z
  .strictObject({
    page: z.int().min(1),
    per_page: z.int().min(1).max(500),
    total: z.int().nonnegative().describe('Invoices matching the filters.'),
    total_pages: z.int().nonnegative().describe('ceil(total / per_page); 0 when nothing matches.'),
    date_field: z
      .enum(['added_date', 'issue_date', 'service_date', 'payment_term', 'payment_date'])
      .optional()
      .describe('Only when a `period` applied: the date field it filtered on.'),
    date_from: z.iso
      .date()
      .nullable()
      .optional()
      .describe('Only when a `period` applied: its first day, inclusive (null: open, a custom range with only `date_to`).'),
    date_to: z.iso
      .date()
      .nullable()
      .optional()
      .describe('Only when a `period` applied: its last day, inclusive (null: open, a custom range with only `date_from`).'),
    timezone: z.string().optional().describe('Only when a `period` applied: the IANA time zone its days were read in (APP_TIMEZONE).'),
  })
  .describe('Where this page sits in the whole result, and, when a period applied, the date range it meant at that moment.');

export const invoiceListSchema = z.strictObject({ invoices: z.array(invoiceSchema), pagination: paginationSchema });

export const orderLookupSchema = z
  .strictObject({
    id: z.int().describe('Order ID.'),
    nr: z.string().describe('Order number.'),
    ownnr: z.string().describe("The client's own order number."),
  })
  .describe('The order found by number.');

export const fileCategorySchema = z
  .strictObject({
    id: z.int().describe('Usable as category_id when uploading.'),
    name: z.string(),
    visible_customer: z.int().min(0).max(1).describe('1 when the customer sees files of this category.'),
  })
  .describe('A category an uploaded file can be tagged with (one list for all clients).');

export const uploadedFileSchema = z.strictObject({
  id: z.int().describe('File ID.'),
  name: z.string().describe("The client's file name reduced to its base name."),
  category_id: z.int().nullable().describe("The file's category (for a duplicate: the existing file's)."),
  duplicate_of: z
    .int()
    .optional()
    .describe(
      'Only when these bytes (SHA-256) were already attached to this order, by an earlier upload or an earlier part of this request: nothing was stored again, and `id` is the existing file (equal to `duplicate_of`). Not sent otherwise; files already attached to other orders are stored as usual.',
    ),
});

export const failedUploadSchema = z.strictObject({
  name: z.string(),
  error: z.string().describe('Why the file could not be stored, readable by a person.'),
});

export const attachFilesSchema = z
  .strictObject({
    message: z
      .string()
      .describe('`Files uploaded`, `N of M files uploaded` or `No files were uploaded`; with ` (K already attached)` added when K items are duplicates.'),
    order_id: z.int(),
    uploaded: z.array(uploadedFileSchema),
    failed: z.array(failedUploadSchema),
  })
  .describe('What happened to each file of an upload.');

export const orderFileSchema = z
  .strictObject({
    id: z.int().describe('File ID.'),
    name: z.string().describe("The client's file name as uploaded (base name, UTF-8)."),
    category_id: z.int().nullable().describe('The file category, or null.'),
    size: z.int().min(1).describe('Size in bytes.'),
    content_type: z.string().describe('The media type sniffed from the bytes at upload (never the one the client sent).'),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("SHA-256 of the bytes, lower-case hex; the download's `ETag` is this value in quotes."),
    created: z.int().describe('When it was attached, Unix seconds.'),
  })
  .describe('A file attached to an order.');

export const fileLinkSchema = z
  .strictObject({
    url: z.string().describe('An absolute URL that answers a GET (and HEAD, with `Range`) without credentials with the file, until `expires`; a 4xx after it.'),
    expires: z.int().describe('When the link stops working, Unix seconds.'),
  })
  .describe('A link to one file that works without credentials until it expires.');

export const fieldErrorsSchema = z
  .record(z.string(), z.array(z.string()))
  .describe('Messages per field, e.g. `{"per_page": ["The per_page field must not be greater than 500."]}`.');

// Compile-time mirror checks: each line fails to compile when a mapper and its schema differ.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const mirrors: [
  Equals<z.output<typeof invoiceSchema>, ReturnType<typeof toInvoiceDto>>,
  Equals<z.output<typeof invoiceListSchema>, ReturnType<typeof toInvoiceListDto>>,
  Equals<z.output<typeof orderLookupSchema>, ReturnType<typeof toOrderLookupDto>>,
  Equals<z.output<typeof fileCategorySchema>, ReturnType<typeof toFileCategoryDto>>,
  Equals<z.output<typeof attachFilesSchema>, ReturnType<typeof toAttachFilesDto>>,
  Equals<z.output<typeof orderFileSchema>, ReturnType<typeof toOrderFileDto>>,
] = [true, true, true, true, true, true];
void mirrors;
