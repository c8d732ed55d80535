/**
 * `attachment; filename="<nr made file-safe>.pdf"`: every character outside
 * ASCII letters, digits, `-` and `.` becomes `_`; a non-ASCII number also
 * gets an RFC 5987 `filename*` that keeps its letters.
 */
export function pdfContentDisposition(invoiceNr: string): string {
  return invoiceDownloadDisposition(invoiceNr, 'pdf');
}

/** The same download name with another extension (`xml` for e-invoices). */
export function invoiceDownloadDisposition(invoiceNr: string, extension: string): string {
  const ascii = `${invoiceNr.replace(/[^A-Za-z0-9.-]/g, '_')}.${extension}`;
  // eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included, is the test for a plain name
  if (/^[\x00-\x7f]*$/.test(invoiceNr)) return `attachment; filename="${ascii}"`;
  const unicode = `${invoiceNr.replace(/[^\p{L}\p{N}.-]/gu, '_')}.${extension}`;
  const encoded = encodeURIComponent(unicode).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
