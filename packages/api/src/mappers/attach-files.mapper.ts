import type { AttachFilesPayload } from '@logi/domain';

export function toAttachFilesDto(payload: AttachFilesPayload) {
  return {
    message: payload.message,
    order_id: payload.orderId,
    uploaded: payload.uploaded.map((file) => ({ id: file.id, name: file.name, category_id: file.categoryId })),
    failed: payload.failed.map((file) => ({ name: file.name, error: file.error })),
  };
}
