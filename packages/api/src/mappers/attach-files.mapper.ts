import type { AttachFilesPayload } from '@logi/domain';

export function toAttachFilesDto(payload: AttachFilesPayload) {
  return {
    message: payload.message,
    order_id: payload.orderId,
    uploaded: payload.uploaded.map((file) => ({
      id: file.id,
      name: file.name,
      category_id: file.categoryId,
      // Only on a duplicate: a client that uploads none sees no new field.
      ...(file.duplicateOf === undefined ? {} : { duplicate_of: file.duplicateOf }),
    })),
    failed: payload.failed.map((file) => ({ name: file.name, error: file.error })),
  };
}
