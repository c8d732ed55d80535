import { LRUCache } from 'lru-cache';

/**
 * What one process remembers of the PDFs it served (printed versions, valid only under the data version they were read
 * under, and recent bytes by version), so a repeated download costs one read of the data version (docs/contribute/decisions/0029-pdf-cache-by-printed-version.md).
 */
export interface PrintedVersion {
  version: string;
  invoiceNr: string;
}

export class RecentPdfs {
  private readonly versions: LRUCache<string, PrintedVersion & { dataVersion: string }> | null;
  private readonly pdfs: LRUCache<string, Buffer> | null;

  constructor(limits: {
    /** Downloads whose printed version is remembered. */
    versions: number;
    /** Bytes of PDFs kept; 0 keeps none. */
    pdfBytes: number;
  }) {
    this.versions = limits.versions > 0 ? new LRUCache({ max: limits.versions }) : null;
    // One PDF over a quarter of the budget would push out many: not kept.
    this.pdfs =
      limits.pdfBytes > 0
        ? new LRUCache({ maxSize: limits.pdfBytes, maxEntrySize: limits.pdfBytes / 4, sizeCalculation: (pdf) => Math.max(1, pdf.length) })
        : null;
  }

  /** The version a download printed, if the directory's data is still at `dataVersion`. */
  printed(key: string, dataVersion: string): PrintedVersion | null {
    const entry = this.versions?.get(key);
    if (!entry) return null;
    if (entry.dataVersion !== dataVersion) {
      this.versions!.delete(key);
      return null;
    }
    return { version: entry.version, invoiceNr: entry.invoiceNr };
  }

  rememberPrinted(key: string, dataVersion: string, printed: PrintedVersion): void {
    this.versions?.set(key, { ...printed, dataVersion });
  }

  pdf(version: string): Buffer | null {
    return this.pdfs?.get(version) ?? null;
  }

  rememberPdf(version: string, pdf: Buffer): void {
    // A version names its bytes: one already kept is the same PDF.
    if (this.pdfs?.has(version)) return;
    this.pdfs?.set(version, pdf);
  }
}

/** The key of one download: directory, invoice and the query that decides what is printed. */
export function downloadKey(directory: string, invoiceId: number, query: Record<string, string | boolean>): string {
  const parts = Object.keys(query)
    .sort()
    .map((name) => `${name}=${String(query[name])}`);
  return [directory, String(invoiceId), ...parts].join('\u0000');
}
