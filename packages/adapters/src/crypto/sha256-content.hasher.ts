import { createHash } from 'node:crypto';
import type { ContentHasherPort } from '@logi/domain';

export class Sha256ContentHasher implements ContentHasherPort {
  sha256Hex(text: string): string {
    return createHash('sha256').update(text, 'utf8').digest('hex');
  }
}
