/** A render job's hand-over key for an invoice, a uuid as the API makes it (the payload schema refuses any other). */
export const pdfKeyOf = (invoiceId: number): string => `pdf/00000000-0000-4000-8000-${String(invoiceId).padStart(12, '0')}.pdf`;
