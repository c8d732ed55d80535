import { describe, expect, it } from 'vitest';
import { DownloadInvoicePdfUseCase, InvoiceNotFoundError, ServiceUnavailableError, ValidationError, type JobPayloads } from '@logi/domain';
import { FakeInvoices, FakeQueue, FakeStorage, sampleInvoice } from './fakes.js';

function setup() {
  const invoices = new FakeInvoices([sampleInvoice()]);
  const storage = new FakeStorage();
  const rendered: JobPayloads['render-invoice-pdf'][] = [];
  const queue = new FakeQueue(() => ({
    'render-invoice-pdf': async (payload) => {
      rendered.push(payload);
      await storage.putBuffer(payload.pdfKey, Buffer.from('%PDF-1.7'), 'application/pdf');
      return { pdfKey: payload.pdfKey, bytes: 8, invoiceNr: 'NR-FROM-THE-JOB' };
    },
  }));
  const useCase = new DownloadInvoicePdfUseCase({ invoices, storage, queue, jobTimeoutMs: 1000, newId: () => 'abc', now: () => 5_000 });
  return { useCase, storage, rendered, queue };
}

describe('download invoice pdf', () => {
  it('when the invoice exists, then the rendered bytes and the number from the job come back and the temporary object is removed', async () => {
    const { useCase, storage, rendered } = setup();
    const result = await useCase.execute({ directory: 'baltic', invoiceId: 9001, query: new URLSearchParams('lang=pl&duplicate=1'), requestId: 'r1' });
    expect(result).toEqual({ invoiceNr: 'NR-FROM-THE-JOB', pdf: Buffer.from('%PDF-1.7') });
    expect(rendered).toEqual([{ directory: 'baltic', invoiceId: 9001, lang: 'pl', duplicate: true, pdfKey: 'pdf/abc.pdf', requestId: 'r1', deadline: 5_900 }]);
    expect(storage.objects.size).toBe(0);
  });

  it('when nothing is asked, then English and no duplicate mark', async () => {
    const { useCase, rendered } = setup();
    await useCase.execute({ directory: 'baltic', invoiceId: 9001, query: [], requestId: 'r' });
    expect(rendered[0]).toMatchObject({ lang: 'en', duplicate: false });
  });

  it('when the invoice is missing, then 404 wins over an invalid query', async () => {
    const { useCase } = setup();
    await expect(useCase.execute({ directory: 'baltic', invoiceId: 1, query: new URLSearchParams('lang=xx'), requestId: 'r' })).rejects.toBeInstanceOf(InvoiceNotFoundError);
    await expect(useCase.execute({ directory: 'alpine', invoiceId: 9001, query: [], requestId: 'r' })).rejects.toBeInstanceOf(InvoiceNotFoundError);
  });

  it.each(['lang=EN', 'lang=fr', 'lang=e', 'duplicate=yes', 'duplicate=TRUE', 'lang=en&lang=pl', 'duplicate[]=1'])(
    'when %s, then the query is invalid',
    async (qs) => {
      const { useCase } = setup();
      const error = await useCase.execute({ directory: 'baltic', invoiceId: 9001, query: new URLSearchParams(qs), requestId: 'r' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toBe('The given data was invalid.');
    },
  );

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('when duplicate=%s, then the flag is %s', async (value, flag) => {
    const { useCase, rendered } = setup();
    await useCase.execute({ directory: 'baltic', invoiceId: 9001, query: new URLSearchParams(`duplicate=${value}`), requestId: 'r' });
    expect(rendered[0]!.duplicate).toBe(flag);
  });

  it('when the renderer fails, then the answer is 503 and nothing is left in storage', async () => {
    const { useCase, storage, queue } = setup();
    queue.unavailable = new Error('browser crashed');
    await expect(useCase.execute({ directory: 'baltic', invoiceId: 9001, query: [], requestId: 'r' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(storage.objects.size).toBe(0);
  });
});
