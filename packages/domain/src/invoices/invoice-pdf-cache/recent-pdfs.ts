/**
 * What one process remembers of the PDFs it served, so that a repeated
 * download costs one read of the directory's data version instead of
 * reading the invoice, its rows and the seller's company data, printing
 * them as a document and hashing it, and then a storage request:
 * - which version a download printed (per directory, invoice and query),
 *   valid only while the directory's data version is the one it was read
 *   under: every write of an invoice, its rows or the client's company data
 *   bumps that version (triggers), so a remembered version is never used
 *   for changed data;
 * - the bytes of recent PDFs by version. A version names its bytes (it is a
 *   hash of everything printed and the template), so these never go stale;
 *   they are bounded in bytes.
 * Both are least-recently-used maps. Nothing here is shared between
 * processes: storage stays the cache they share.
 */
export interface PrintedVersion {
  version: string;
  invoiceNr: string;
}

export class RecentPdfs {
  private readonly versions = new Map<string, PrintedVersion & { dataVersion: string }>();
  private readonly pdfs = new Map<string, Buffer>();
  private pdfBytes = 0;

  constructor(
    private readonly limits: {
      /** Downloads whose printed version is remembered. */
      versions: number;
      /** Bytes of PDFs kept; 0 keeps none. */
      pdfBytes: number;
    },
  ) {}

  /** The version a download printed, if the directory's data is still at `dataVersion`. */
  printed(key: string, dataVersion: string): PrintedVersion | null {
    const entry = this.versions.get(key);
    if (!entry) return null;
    if (entry.dataVersion !== dataVersion) {
      this.versions.delete(key);
      return null;
    }
    this.versions.delete(key);
    this.versions.set(key, entry);
    return { version: entry.version, invoiceNr: entry.invoiceNr };
  }

  rememberPrinted(key: string, dataVersion: string, printed: PrintedVersion): void {
    if (this.limits.versions <= 0) return;
    this.versions.delete(key);
    this.versions.set(key, { ...printed, dataVersion });
    while (this.versions.size > this.limits.versions) this.versions.delete(this.versions.keys().next().value!);
  }

  pdf(version: string): Buffer | null {
    const pdf = this.pdfs.get(version);
    if (!pdf) return null;
    this.pdfs.delete(version);
    this.pdfs.set(version, pdf);
    return pdf;
  }

  rememberPdf(version: string, pdf: Buffer): void {
    // One PDF over a quarter of the budget would push out many: not kept.
    if (pdf.length > this.limits.pdfBytes / 4 || this.pdfs.has(version)) return;
    this.pdfs.set(version, pdf);
    this.pdfBytes += pdf.length;
    while (this.pdfBytes > this.limits.pdfBytes) {
      const [oldest, bytes] = this.pdfs.entries().next().value!;
      this.pdfs.delete(oldest);
      this.pdfBytes -= bytes.length;
    }
  }
}

/** The key of one download: directory, invoice and the query that decides what is printed. */
export function downloadKey(directory: string, invoiceId: number, query: Record<string, string | boolean>): string {
  const parts = Object.keys(query)
    .sort()
    .map((name) => `${name}=${String(query[name])}`);
  return [directory, String(invoiceId), ...parts].join('\u0000');
}
