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

/**
 * `attachment` with a stored file's name, whatever it holds. `filename` is a
 * quoted ASCII fallback: anything outside printable ASCII, and `"`, `\` and
 * `%` (which some clients decode), becomes `_`. When that changed the name,
 * `filename*=UTF-8''…` (RFC 6266, RFC 8187) carries it exactly, control
 * characters replaced too, so neither form can end or split the header.
 */
export function fileContentDisposition(name: string): string {
  // Lone surrogates cannot be encoded as UTF-8 (encodeURIComponent throws); they become U+FFFD.
  const wellFormed = name.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  // eslint-disable-next-line no-control-regex -- control characters are what is being replaced
  const clean = wellFormed.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/g, '_') || 'file';
  const ascii = clean.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  if (ascii === clean) return `attachment; filename="${ascii}"`;
  const encoded = encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
