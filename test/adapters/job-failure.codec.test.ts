import { describe, expect, it } from 'vitest';
import { DocumentNotWritableError, ServiceUnavailableError } from '@logi/domain';
import { decodeJobFailure, encodeDomainError } from '../../packages/adapters/src/bullmq/job-failure.codec.js';

describe('a job failure crossing Redis', () => {
  it('when a worker could not write a document from the data, then the waiting side raises the same for-good failure (a 500), without the detail', () => {
    const decoded = decodeJobFailure(encodeDomainError(new DocumentNotWritableError('facturx', 'Invalid character in XMP packet at 12')));
    expect(decoded).toBeInstanceOf(DocumentNotWritableError);
    expect(decoded).not.toBeInstanceOf(ServiceUnavailableError);
    expect(decoded).toMatchObject({ code: 'DOCUMENT_NOT_WRITABLE', document: 'facturx', message: 'Server Error' });
    expect((decoded as DocumentNotWritableError).detail).not.toContain('XMP');
  });

  it('when the renderer was unavailable, then it stays a 503 with its reason', () => {
    const decoded = decodeJobFailure(encodeDomainError(new ServiceUnavailableError('The PDF could not be rendered right now.')));
    expect(decoded).toBeInstanceOf(ServiceUnavailableError);
    expect((decoded as ServiceUnavailableError).reason).toBe('The PDF could not be rendered right now.');
  });
});
